// One run's Python, in a Web Worker (a module worker: Pyodide refuses a classic one).
// The page stays responsive whatever the code does, and Stop (or the time limit) is
// worker.terminate(). The page uses each worker for one run only, so every run starts
// from minigrad as it was installed.
//
// Messages from the page:  {kind: "load", indexURL, zip}, then {kind: "run", code}.
// Messages to the page:    {kind: "ready", version, fetched} or {kind: "failed", where, why};
//                          {kind: "event", event} while the code runs, then {kind: "done", error, exit}.
let session = null;

async function load(indexURL, zip) {
  let loadPyodide;
  try {
    // From the CDN (a cross-origin module, which the CDN allows) or from /pyodide/ alike.
    ({ loadPyodide } = await import(`${indexURL}pyodide.mjs`));
  } catch (error) {
    postMessage({ kind: "failed", where: "script", why: `its module, pyodide.mjs, did not load (${error})` });
    return;
  }
  let pyodide;
  try {
    pyodide = await loadPyodide({ indexURL });
  } catch (error) {
    // pyodide.mjs came, the rest of Pyodide (its module, .wasm, standard library) did not.
    postMessage({ kind: "failed", where: "pyodide", why: String(error) });
    return;
  }
  pyodide.FS.writeFile("/tmp/minigrad.zip", new Uint8Array(zip));
  pyodide.runPython(
    "import importlib, site, zipfile\n" +
      "zipfile.ZipFile('/tmp/minigrad.zip').extractall(site.getsitepackages()[0])\n" +
      "importlib.invalidate_caches()\n",
  );
  session = pyodide.pyimport("minigrad.cli.playground.session");
  const fetched = performance.getEntriesByType("resource").map((entry) => entry.name);
  postMessage({ kind: "ready", version: pyodide.version, fetched });
}

function run(code) {
  const emit = (text) => postMessage({ kind: "event", event: JSON.parse(text) });
  let result;
  try {
    result = JSON.parse(session.run_json(code, emit));
  } catch (error) {
    // Python itself failed (os._exit, a fatal error): the run ends with what it said.
    result = { error: `Python stopped: ${error}\n`, exit: null };
  }
  postMessage({ kind: "done", error: result.error, exit: result.exit });
}

self.onmessage = (message) => {
  const order = message.data;
  if (order.kind === "load") {
    load(order.indexURL, order.zip).catch((error) =>
      postMessage({ kind: "failed", where: "start", why: String(error) }),
    );
  } else if (order.kind === "run") {
    run(order.code);
  }
};
