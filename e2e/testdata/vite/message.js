export const message = "first version";
