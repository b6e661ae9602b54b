// The playground page: load Pyodide, unpack minigrad into it, run the editor's code.
// Errors of the page itself (not of the user's Python, which go to the output)
// are collected into #page-errors, so a person and the browser test both see them.
"use strict";

const pageErrors = [];

function notePageError(text) {
  pageErrors.push(text);
  const box = document.getElementById("page-errors");
  box.textContent = pageErrors.join("\n");
  box.hidden = false;
  document.body.dataset.errors = String(pageErrors.length);
}

window.addEventListener("error", (event) => notePageError(`error: ${event.message}`));
window.addEventListener("unhandledrejection", (event) =>
  notePageError(`unhandled rejection: ${event.reason}`),
);
const originalConsoleError = console.error.bind(console);
console.error = (...args) => {
  notePageError(args.map(String).join(" "));
  originalConsoleError(...args);
};

const editor = document.getElementById("editor");
const runButton = document.getElementById("run");
const statusLine = document.getElementById("status");
const output = document.getElementById("output");
const shown = document.getElementById("shown");

function setState(state, words) {
  document.body.dataset.state = state;
  statusLine.textContent = words;
}

let session = null;

function show(result) {
  output.textContent = result.stdout;
  if (result.error) {
    const failure = document.createElement("span");
    failure.className = "traceback";
    failure.textContent = result.error;
    output.append(failure);
  }
  shown.replaceChildren();
  result.shown.forEach((item, i) => {
    const box = document.createElement("figure");
    box.className = `shown ${item.kind}`;
    box.id = `shown-${i}`;
    if (item.kind === "text") {
      const pre = document.createElement("pre");
      pre.textContent = item.content;
      box.append(pre);
    } else {
      // SVG and HTML made by minigrad (its report escapes every text it quotes).
      box.innerHTML = item.content;
    }
    shown.append(box);
  });
}

function run() {
  if (session === null) return;
  setState("running", "running...");
  const result = JSON.parse(session.run_json(editor.value));
  show(result);
  if (result.error) setState("raised", "your code raised an exception: see the output");
  else setState("done", `ran at ${new Date().toLocaleTimeString()}`);
}

// Says why Python is missing: from the CDN (no internet?) or from --pyodide DIR.
function couldNotLoad(pyodideURL, why) {
  setState("failed", "could not load Python");
  // The page names the CDN by its absolute URL, a local copy by "/pyodide/".
  if (/^https?:/.test(pyodideURL)) {
    notePageError(
      `Pyodide could not be loaded from its CDN, ${pyodideURL}: ${why}. Is this browser ` +
        "online? Without internet, start the playground with --pyodide DIR, a local copy " +
        "of Pyodide (see docs/playground.md).",
    );
  } else {
    notePageError(
      `Pyodide could not be loaded from the folder given to --pyodide (served as ` +
        `${pyodideURL}): ${why}. Give the folder of the npm package "pyodide", or a Pyodide ` +
        "release's full/ folder.",
    );
  }
}

async function start() {
  const pyodideURL = document.body.dataset.pyodide;
  if (typeof loadPyodide !== "function") {
    couldNotLoad(pyodideURL, "its script, pyodide.js, did not load");
    return;
  }
  const files = Promise.all([
    fetch("lesson.py").then((answer) => answer.text()),
    fetch("minigrad.zip").then((answer) => answer.arrayBuffer()),
  ]);
  let pyodide;
  try {
    pyodide = await loadPyodide({ indexURL: pyodideURL });
  } catch (error) {
    // pyodide.js came, the rest of Pyodide (its module, .wasm, standard library) did not.
    couldNotLoad(pyodideURL, String(error));
    return;
  }
  const [lesson, zip] = await files;
  pyodide.FS.writeFile("/tmp/minigrad.zip", new Uint8Array(zip));
  pyodide.runPython(
    "import importlib, site, zipfile\n" +
      "zipfile.ZipFile('/tmp/minigrad.zip').extractall(site.getsitepackages()[0])\n" +
      "importlib.invalidate_caches()\n",
  );
  session = pyodide.pyimport("minigrad.cli.playground.session");
  if (!editor.value) editor.defaultValue = lesson;
  runButton.disabled = false;
  setState("ready", `Python ${pyodide.version} ready`);
}

runButton.addEventListener("click", run);
editor.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
    event.preventDefault();
    run();
  }
});
start().catch((error) => {
  setState("failed", "could not start");
  notePageError(`start: ${error}`);
});
