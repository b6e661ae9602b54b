// node pyodide_run.mjs PYODIDE_DIR PACKAGE SCRIPT EXPRESSION
//
// Loads Pyodide from PYODIDE_DIR (the npm package's folder), unzips PACKAGE (a
// wheel, or any zip whose names start "minigrad/") into its site-packages,
// runs SCRIPT (a Python file) and prints the value of EXPRESSION, a string,
// on stdout. What Python prints goes to stderr. Exit status 1 on any error.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [pyodideDir, packagePath, scriptPath, expression] = process.argv.slice(2);
const { loadPyodide } = await import(pathToFileURL(join(pyodideDir, "pyodide.mjs")).href);
const pyodide = await loadPyodide({
  indexURL: pyodideDir + "/",
  stdout: (line) => process.stderr.write(`${line}\n`),
  stderr: (line) => process.stderr.write(`${line}\n`),
});
pyodide.FS.writeFile("/tmp/package.zip", readFileSync(packagePath));
pyodide.runPython(
  "import importlib, site, zipfile\n" +
    "zipfile.ZipFile('/tmp/package.zip').extractall(site.getsitepackages()[0])\n" +
    "importlib.invalidate_caches()\n",
);
try {
  pyodide.runPython(readFileSync(scriptPath, "utf8"));
  process.stdout.write(String(pyodide.runPython(expression)));
} catch (error) {
  // A PythonError's message is the Python traceback: print that, not Node's stack.
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
}
