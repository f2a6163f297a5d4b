// Registers the service worker and shows the precached API response.
window.swReady = navigator.serviceWorker.register("sw.js").then(() => navigator.serviceWorker.ready);
fetch("api/data.json")
  .then((r) => r.json())
  .then((d) => { document.getElementById("data").textContent = d.message; })
  .catch((e) => { document.getElementById("data").textContent = "failed: " + e; });
