import { message } from "./message.js";

function render(text) {
  document.getElementById("message").textContent = text;
  console.log("rendered:", text);
}

render(message);

if (import.meta.hot) {
  import.meta.hot.accept("./message.js", (next) => render(next.message));
}
