// The playground page: the editor, Run and Stop, and what a run prints and shows.
// Python runs in a Web Worker (playground-worker.js), a fresh one for each run: the
// page stays responsive during an endless loop, Stop or the time limit ends a run
// with worker.terminate(), and a change a run makes to minigrad dies with its worker.
// The next run's worker loads while the page is idle, so Run does not wait for it.
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
const lineNumbers = document.getElementById("line-numbers");
const runButton = document.getElementById("run");
const stopButton = document.getElementById("stop");
const limitInput = document.getElementById("limit");
const statusLine = document.getElementById("status");
const output = document.getElementById("output");
const shown = document.getElementById("shown");
const pyodideURL = document.body.dataset.pyodide;

function setState(state, words) {
  document.body.dataset.state = state;
  statusLine.textContent = words;
}

function numberLines() {
  const count = editor.value.split("\n").length;
  lineNumbers.textContent = Array.from({ length: count }, (_, i) => i + 1).join("\n");
  lineNumbers.scrollTop = editor.scrollTop;
}

// ---- what a run shows ----

function append(kind, text) {
  const last = output.lastElementChild;
  if (last !== null && last.dataset.kind === kind) {
    last.append(text); // one span per stretch of one stream, not one per write
    return;
  }
  const span = document.createElement("span");
  span.className = kind;
  span.dataset.kind = kind;
  span.textContent = text;
  output.append(span);
}

// An HTML view runs in a sandboxed frame: its script runs (a view that steps
// through something), but it cannot reach this page. It reports its height.
const FRAME_HEIGHT =
  "<script>new ResizeObserver(() => parent.postMessage({minigradFrameHeight: " +
  "document.documentElement.scrollHeight}, '*')).observe(document.documentElement);</script>";
const FRAME_STYLE =
  "<style>body { font: 13px system-ui, sans-serif; margin: 0.3rem; } " +
  "table { border-collapse: collapse; font-size: 12px; margin: 0.3rem 0; } " +
  "td, th { border: 1px solid #ccc; padding: 2px 5px; text-align: left; } " +
  "p { margin: 0.3rem 0; }</style>";

window.addEventListener("message", (event) => {
  const height = event.data && event.data.minigradFrameHeight;
  if (typeof height !== "number") return;
  for (const frame of shown.querySelectorAll("iframe")) {
    if (frame.contentWindow === event.source) frame.style.height = `${Math.ceil(height) + 4}px`;
  }
});

function showItem(item) {
  const box = document.createElement("figure");
  box.className = `shown ${item.as}`;
  box.id = `shown-${shown.childElementCount}`;
  if (item.as === "text") {
    const pre = document.createElement("pre");
    pre.textContent = item.content;
    box.append(pre);
  } else if (item.as === "html") {
    const frame = document.createElement("iframe");
    frame.setAttribute("sandbox", "allow-scripts");
    frame.srcdoc = `<!doctype html><meta charset="utf-8">${FRAME_STYLE}${item.content}${FRAME_HEIGHT}`;
    box.append(frame);
  } else {
    box.innerHTML = item.content; // an SVG picture, made by minigrad
  }
  shown.append(box);
}

function onEvent(event) {
  if (event.kind === "show") showItem(event);
  else append(event.kind, event.text);
}

// ---- workers ----

const minigradZip = fetch("minigrad.zip").then((answer) => answer.arrayBuffer());
let spare = null; // the worker the next run uses: {worker, ready}
let current = null; // the running one: {worker, ready, timer, started}

function startWorker() {
  const worker = new Worker("playground-worker.js", { type: "module" });
  const ready = new Promise((resolve, reject) => {
    worker.onmessage = (message) => {
      if (message.data.kind === "ready") resolve(message.data);
      else if (message.data.kind === "failed") reject(message.data);
    };
    worker.onerror = (event) => reject({ where: "start", why: event.message });
  });
  minigradZip.then((zip) => worker.postMessage({ kind: "load", indexURL: pyodideURL, zip }));
  return { worker, ready };
}

function finish(mine, state, words) {
  clearTimeout(mine.timer);
  mine.worker.terminate();
  if (current !== mine) return;
  current = null;
  setState(state, words);
  runButton.disabled = false;
  stopButton.disabled = true;
  spare = startWorker();
  spare.ready.catch((failure) => couldNotLoad(failure));
}

function timeLimit() {
  const seconds = Number(limitInput.value);
  return Number.isFinite(seconds) && seconds > 0 ? seconds : Number(limitInput.defaultValue);
}

async function run() {
  if (current !== null || spare === null) return;
  const mine = spare;
  spare = null;
  current = mine;
  runButton.disabled = true;
  stopButton.disabled = false;
  output.replaceChildren();
  shown.replaceChildren();
  setState("running", "running...");
  try {
    await mine.ready;
  } catch (failure) {
    return; // said by couldNotLoad already
  }
  if (current !== mine) return; // stopped while its Python was loading
  const seconds = timeLimit();
  mine.started = performance.now();
  mine.worker.onmessage = (message) => {
    const answer = message.data;
    if (answer.kind === "event") onEvent(answer.event);
    else if (answer.kind === "done") ended(mine, answer);
  };
  mine.timer = setTimeout(() => {
    append("stopped", `\n[stopped: the time limit of ${seconds} s was reached]\n`);
    finish(mine, "stopped", `stopped at the time limit (${seconds} s)`);
  }, seconds * 1000);
  mine.worker.postMessage({ kind: "run", code: editor.value });
}

function ended(mine, answer) {
  const when = new Date().toLocaleTimeString();
  if (answer.error) {
    append("traceback", answer.error);
    finish(mine, "raised", "your code raised an exception: see the output");
  } else if (answer.exit !== null) {
    append("exit", `[the program called sys.exit(${answer.exit})]\n`);
    finish(mine, "exited", `sys.exit(${answer.exit}) at ${when}`);
  } else {
    finish(mine, "done", `ran at ${when}`);
  }
}

function stop() {
  if (current === null) return;
  const mine = current;
  if (mine.started === undefined) {
    append("stopped", "[stopped by Stop before the code started]\n");
  } else {
    const took = (performance.now() - mine.started) / 1000;
    append("stopped", `\n[stopped by Stop after ${took.toFixed(1)} s]\n`);
  }
  finish(mine, "stopped", "stopped");
}

// What the browser says when the page itself asks for the file a worker could not load:
// a worker's failed import names no reason, a fetch from the page gets a status, and
// its network error goes to the page's console, where DevTools shows it.
async function whyNot(url) {
  try {
    const answer = await fetch(url, { cache: "no-store" });
    return answer.ok ? `${url} loads now` : `${url} answered ${answer.status}`;
  } catch (error) {
    return `${url} could not be fetched (${error}: the console names the network error)`;
  }
}

// Says why Python is missing: from the CDN (no internet?) or from --pyodide DIR.
async function couldNotLoad(failure) {
  runButton.disabled = true;
  stopButton.disabled = true;
  current = null;
  const named = /(?:https?:\/\/|\/pyodide\/)[^\s'"]*\.(?:mjs|js|wasm|zip|json)\b/.exec(failure.why);
  const file = failure.where === "script" ? `${pyodideURL}pyodide.mjs` : named && named[0];
  const why = file ? `${failure.why}; ${await whyNot(file)}` : String(failure.why);
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
  const lesson = fetch("lesson.py").then((answer) => answer.text());
  spare = startWorker();
  if (!editor.value) editor.defaultValue = await lesson;
  numberLines();
  let ready;
  try {
    ready = await spare.ready;
  } catch (failure) {
    await couldNotLoad(failure);
    return;
  }
  // What the first worker fetched, for a person in DevTools and for the browser test.
  document.body.dataset.workerFetched = JSON.stringify(ready.fetched);
  runButton.disabled = false;
  setState("ready", `Python ${ready.version} ready`);
}

runButton.addEventListener("click", run);
stopButton.addEventListener("click", stop);
editor.addEventListener("input", numberLines);
editor.addEventListener("scroll", () => {
  lineNumbers.scrollTop = editor.scrollTop;
});
editor.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
    event.preventDefault();
    run();
  } else if (event.key === "Escape") {
    stop();
  }
});
start().catch((error) => {
  setState("failed", "could not start");
  notePageError(`start: ${error}`);
});
