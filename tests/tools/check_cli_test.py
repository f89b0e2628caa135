#!/usr/bin/env python3
"""torchada-check's command line on real binaries.

Every answer is compared with an independent reference: the imports with readelf's view of the
same file, each classification with this file's own reading of symbols/*.txt, kernel names with
the kernels in the .cu source, verdicts with what the inputs were built to be. Every --json
document is validated against tools/check/schema.json (by the small validator below, and by the
jsonschema package too when it is installed).

Inputs come from the environment (tests/tools/CMakeLists.txt sets it): CHECK_TOOL, CHECK_SCHEMA,
CHECK_SYMBOLS, CHECK_CUDA_LIB_DIR, CHECK_READELF, CHECK_SCRATCH, CHECK_DYN13/12, CHECK_LIB13/12,
CHECK_NVCC_<name>.
Run one case: check_cli_test.py CheckCli.test_dynamic_program_cuda13
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

ENV = os.environ
TOOL = ENV.get("CHECK_TOOL", "")
CATEGORY = {"forward": "forwarded", "shim": "forwarded", "translate": "translated",
            "narrow": "translated", "unsupported": "unsupported", "kernel": "kernel"}
# The kernels in tests/tools/programs/kernels.cu: add(float*, int), mul(float*, int).
KERNELS_CU = ["_Z3addPfi", "_Z3mulPfi"]


# --- a JSON Schema subset: what tools/check/schema.json uses --------------------------------
def validate(doc, schema, root=None, path="$"):
    root = root or schema
    if "$ref" in schema:
        node = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            node = node[part]
        validate(doc, node, root, path)
    types = schema.get("type")
    if types is not None:
        types = types if isinstance(types, list) else [types]
        ok = {"object": lambda v: isinstance(v, dict), "array": lambda v: isinstance(v, list),
              "string": lambda v: isinstance(v, str), "boolean": lambda v: isinstance(v, bool),
              "null": lambda v: v is None,
              "integer": lambda v: isinstance(v, int) and not isinstance(v, bool)}
        if not any(ok[t](doc) for t in types):
            raise AssertionError(f"{path}: {doc!r} is not of type {types}")
    if "const" in schema and doc != schema["const"]:
        raise AssertionError(f"{path}: {doc!r} != {schema['const']!r}")
    if "enum" in schema and doc not in schema["enum"]:
        raise AssertionError(f"{path}: {doc!r} not in {schema['enum']}")
    if "minimum" in schema and doc < schema["minimum"]:
        raise AssertionError(f"{path}: {doc} < {schema['minimum']}")
    if isinstance(doc, dict):
        for key in schema.get("required", []):
            if key not in doc:
                raise AssertionError(f"{path}: missing required key {key!r}")
        props = schema.get("properties", {})
        for key, value in doc.items():
            if key in props:
                validate(value, props[key], root, f"{path}.{key}")
            elif schema.get("additionalProperties") is False:
                raise AssertionError(f"{path}: unexpected key {key!r}")
    if isinstance(doc, list) and "items" in schema:
        for i, item in enumerate(doc):
            validate(item, schema["items"], root, f"{path}[{i}]")
    if "if" in schema:
        try:
            validate(doc, schema["if"], root, path)
            branch = schema.get("then")
        except AssertionError:
            branch = schema.get("else")
        if branch:
            validate(doc, branch, root, path)


def load_schema():
    with open(ENV["CHECK_SCHEMA"]) as f:
        return json.load(f)


# --- the tables, read independently of the tool ---------------------------------------------
def read_tables(directory):
    """{stem: {name: [(set(abis), disposition, note, line)]}} for every *.txt with table rows."""
    tables = {}
    for fname in sorted(os.listdir(directory)):
        if not fname.endswith(".txt"):
            continue
        rows = {}
        with open(os.path.join(directory, fname), encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                if not line.strip() or line.lstrip().startswith("#"):
                    continue
                parts = line.split(None, 4)
                if len(parts) < 4 or not re.fullmatch(r"[0-9.]+(,[0-9.]+)*", parts[1]):
                    continue
                note = parts[4].strip() if len(parts) > 4 else ""
                rows.setdefault(parts[0], []).append(
                    (set(parts[1].split(",")), parts[2], note, lineno))
        if rows:
            tables[fname[:-4]] = rows
    return tables


def table_for_library(soname):
    m = re.match(r"lib(.+?)\.so(\.|$)", os.path.basename(soname))
    fam = m.group(1) if m else ""
    return "driver" if fam == "cuda" else fam


def expected(tables, name, library, abi):
    """(category, reason-or-note) the tables give for an import."""
    rows = tables.get(table_for_library(library), {}).get(name)
    if not rows:
        return "unknown", None
    for abis, disposition, note, _ in rows:
        if abi in abis:
            return CATEGORY.get(disposition, "unknown"), note
    return "unknown", None


# --- readelf: the imports as binutils sees them -----------------------------------------------
def readelf_imports(path):
    """{name: (file, node)} for every undefined dynamic symbol with a version requirement."""
    out = subprocess.run([ENV["CHECK_READELF"], "-W", "-V", "--dyn-syms", path], check=True,
                         capture_output=True, text=True).stdout
    index_to = {}
    current = None
    for line in out.splitlines():
        m = re.search(r"File: (\S+)", line)
        if m:
            current = m.group(1)
        m = re.search(r"Name: (\S+)\s+Flags: \S+\s+Version: (\d+)", line)
        if m and current:
            index_to[int(m.group(2))] = (current, m.group(1))
    imports = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and f[6] == "UND" and f[0].endswith(":"):
            name = f[7]
            m = re.search(r"\((\d+)\)$", line.strip())
            base = name.split("@")[0]
            imports[base] = index_to.get(int(m.group(1))) if m and "@" in name else None
    return imports


def is_cuda_name(n):
    return bool(re.match(r"(cuda|__cuda|cublas|nccl|pnccl|cufft|curand|cusparse|cusolver|cudnn)",
                         n) or re.match(r"cu[A-Z]", n))


class CheckCli(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.schema = load_schema()
        cls.tables = read_tables(ENV["CHECK_SYMBOLS"])
        os.makedirs(ENV["CHECK_SCRATCH"], exist_ok=True)

    def setUp(self):
        self.tmp = tempfile.mkdtemp(dir=ENV["CHECK_SCRATCH"])

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def need(self, var):
        path = ENV.get(var)
        if not path or not os.path.exists(path):
            self.skipTest(f"{var} not built here (no nvcc / CUDA runtime)")
        return path

    def run_tool(self, *args):
        p = subprocess.run([TOOL, *args], capture_output=True, text=True, timeout=60)
        return p.returncode, p.stdout, p.stderr

    def run_json(self, *args):
        rc, out, err = self.run_tool("--json", *args)
        doc = json.loads(out)
        validate(doc, self.schema)
        try:
            import jsonschema  # optional second opinion
            jsonschema.validate(doc, self.schema)
        except ImportError:
            pass
        self.assertEqual(doc["exit_status"], rc)
        return rc, doc, err

    def one(self, doc):
        self.assertEqual(len(doc["files"]), 1)
        return doc["files"][0]

    def assert_imports_match_readelf_and_tables(self, path, f):
        """The tool's imports are readelf's CUDA imports, each classified as the tables say."""
        ref = {n: v for n, v in readelf_imports(path).items() if is_cuda_name(n)}
        got = {i["name"]: i for i in f["imports"]}
        self.assertEqual(set(got), set(ref))
        for name, imp in got.items():
            if ref[name] is not None:
                self.assertEqual((imp["library"], imp["version"]), ref[name], name)
                self.assertEqual(imp["binding"], "version")
            abi = re.search(r"\.so\.(\d+)", imp["version"] or imp["library"] or "")
            cat, note = expected(self.tables, name, imp["library"] or "", abi.group(1) if abi else "")
            self.assertEqual(imp["category"], cat, name)
            if cat in ("unsupported", "kernel"):
                self.assertEqual(imp["reason"], note or imp["disposition"], name)
            counts = f["counts"]
        for c in ("forwarded", "translated", "unsupported", "kernel", "unknown"):
            self.assertEqual(counts[c], sum(1 for i in got.values() if i["category"] == c), c)

    # --- programs built here ------------------------------------------------------------------
    def check_dynamic_program(self, var, abi):
        path = self.need(var)
        rc, doc, _ = self.run_json(path)
        f = self.one(doc)
        self.assert_imports_match_readelf_and_tables(path, f)
        imps = {i["name"]: i for i in f["imports"]}
        self.assertEqual(imps["cudaMalloc"]["category"], "forwarded")
        self.assertEqual(imps["cudaMalloc"]["library"], f"libcudart.so.{abi}")
        self.assertEqual(imps["cudaMalloc"]["target"], "musaMalloc")
        tex = imps["cudaCreateTextureObject"]
        self.assertEqual(tex["category"], "unsupported")
        note = [r for r in self.tables["cudart"]["cudaCreateTextureObject"] if abi in r[0]][0][2]
        self.assertTrue(note)
        self.assertEqual(tex["reason"], note)
        self.assertEqual(f["verdict"], "partial")
        self.assertEqual(rc, 1)
        self.assertIn(f"libcudart.so.{abi}", f["needed"])
        self.assertFalse(f["static_runtime"]["detected"])
        self.assertFalse(f["device_code"]["present"])

    def test_dynamic_program_cuda13(self):
        self.check_dynamic_program("CHECK_DYN13", "13")

    def test_dynamic_program_cuda12(self):
        self.check_dynamic_program("CHECK_DYN12", "12")

    def test_dynamic_library_async_allocation(self):
        path = self.need("CHECK_LIB13")
        rc, doc, _ = self.run_json(path)
        f = self.one(doc)
        self.assert_imports_match_readelf_and_tables(path, f)
        self.assertEqual(f["elf"]["type"], "DYN")
        names = {i["name"] for i in f["imports"]}
        self.assertTrue({"cudaStreamCreate", "cudaMallocAsync", "cudaFreeAsync"} <= names)

    def test_text_output_lists_every_import(self):
        path = self.need("CHECK_DYN13")
        rc, out, _ = self.run_tool(path)
        self.assertEqual(rc, 1)
        self.assertTrue(out.startswith(f"{path}: partial ("), out)
        row = [l for l in out.splitlines() if l.split()[:1] == ["cudaCreateTextureObject"]]
        self.assertEqual(len(row), 1, out)
        self.assertIn("libcudart.so.13", row[0])
        self.assertIn("unsupported", row[0])
        for name in readelf_imports(path):
            if is_cuda_name(name):
                self.assertRegex(out, rf"\n    {re.escape(name)} ")
        self.assertIn("overall: partial (exit status 1)", out)

    def test_nvcc_shared_runtime_with_kernels(self):
        path = self.need("CHECK_NVCC_kernels_shared")
        rc, doc, _ = self.run_json(path)
        f = self.one(doc)
        self.assert_imports_match_readelf_and_tables(path, f)
        d = f["device_code"]
        self.assertTrue(d["present"])
        self.assertEqual(d["kernel_names"], KERNELS_CU)
        self.assertEqual(d["kernels"], 2)
        self.assertTrue(d["kernels_exact"])
        self.assertIn("sm_80", d["architectures"])
        self.assertFalse(f["static_runtime"]["detected"])
        self.assertEqual(f["verdict"], "needs-port")
        self.assertEqual(rc, 2)
        self.assertIn("2 CUDA kernels", f["reasons"][0])

    def test_nvcc_static_runtime(self):
        path = self.need("CHECK_NVCC_kernels_static")
        rc, doc, _ = self.run_json(path)
        f = self.one(doc)
        self.assertNotIn("libcudart.so.13", f["needed"])
        self.assertEqual(f["imports"], [])  # nothing left to import: the runtime is inside
        sr = f["static_runtime"]
        self.assertTrue(sr["detected"])
        self.assertTrue(any(e.startswith("defines ") for e in sr["evidence"]), sr)
        self.assertEqual(f["device_code"]["kernel_names"], KERNELS_CU)
        self.assertEqual((f["verdict"], rc), ("needs-port", 2))
        self.assertIn("statically linked CUDA runtime", f["reasons"][0])

    def test_nvcc_static_runtime_stripped(self):
        path = self.need("CHECK_NVCC_kernels_static_stripped")
        rc, doc, _ = self.run_json(path)
        f = self.one(doc)
        ev = f["static_runtime"]["evidence"]
        self.assertEqual(len(ev), 1, ev)
        self.assertIn("without importing __cudaRegisterFatBinary", ev[0])
        self.assertEqual((f["verdict"], rc), ("needs-port", 2))

    def test_nvcc_shared_runtime_without_kernels_is_ok(self):
        path = self.need("CHECK_NVCC_host_only_shared")
        rc, doc, _ = self.run_json(path)
        f = self.one(doc)
        self.assert_imports_match_readelf_and_tables(path, f)
        d = f["device_code"]
        self.assertTrue(d["present"])  # nvcc embeds an empty module all the same
        self.assertEqual(d["kernels"], 0)
        self.assertTrue(d["kernels_exact"])
        self.assertEqual((f["verdict"], rc), ("ok", 0))
        self.assertIn("holds no kernels", " ".join(f["reasons"]))

    # --- NVIDIA's libraries -------------------------------------------------------------------
    def test_real_cudart_defines_and_is_replaced(self):
        path = os.path.join(ENV["CHECK_CUDA_LIB_DIR"], "libcudart.so.13")
        if not os.path.exists(path):
            self.skipTest("no libcudart.so.13")
        rc, doc, _ = self.run_json(path)
        f = self.one(doc)
        self.assertEqual(f["soname"], "libcudart.so.13")
        self.assertEqual(f["imports"], [])
        self.assertEqual((f["verdict"], f["provides"], rc), ("replaced", "libcudart.so.13", 0))

    def test_real_cublas_imports_cublaslt_and_embeds_device_code(self):
        path = os.path.join(ENV["CHECK_CUDA_LIB_DIR"], "libcublas.so.13")
        if not os.path.exists(path):
            self.skipTest("no libcublas.so.13")
        # With cudart.txt alone (no cuBLAS table): the library is examined, not replaced.
        only = os.path.join(self.tmp, "symbols")
        os.makedirs(only)
        shutil.copy(os.path.join(ENV["CHECK_SYMBOLS"], "cudart.txt"), only)
        rc, doc, _ = self.run_json("--symbols-dir", only, path)
        f = self.one(doc)
        ref = {n: v for n, v in readelf_imports(path).items() if is_cuda_name(n)}
        self.assertEqual({i["name"] for i in f["imports"]}, set(ref))
        lt = [i for i in f["imports"] if i["name"].startswith("cublasLt")]
        self.assertTrue(lt)
        for i in lt:
            self.assertEqual((i["library"], i["version"]), ("libcublasLt.so.13", "libcublasLt.so.13"))
            self.assertEqual(i["category"], "unknown")
            self.assertIn("no table for libcublasLt", i["reason"])
        self.assertNotIn("libcudart.so.13", f["needed"])  # cuBLAS carries its own runtime
        self.assertTrue(f["static_runtime"]["detected"])
        d = f["device_code"]
        self.assertTrue(d["present"])
        self.assertGreater(d["modules"], 0)
        sec = [s for s in d["sections"] if s["name"] == ".nv_fatbin"][0]
        self.assertGreater(sec["compressed_entries"], 0)
        self.assertGreater(sec["containers"], 0)
        self.assertIsNone(sec["problem"])
        self.assertFalse(d["kernels_exact"])  # compressed cubins are not opened
        self.assertEqual((f["verdict"], rc), ("needs-port", 2))
        # With the project's tables: replaced when symbols/cublas.txt exists.
        rc, doc, _ = self.run_json(path)
        f = self.one(doc)
        if "cublas" in self.tables:
            self.assertEqual((f["verdict"], f["provides"], rc), ("replaced", "libcublas.so.13", 0))
        else:
            self.assertEqual(f["verdict"], "needs-port")

    # --- trees --------------------------------------------------------------------------------
    def test_directory_recursive_dedup_and_skips(self):
        dyn = self.need("CHECK_DYN13")
        lib = self.need("CHECK_LIB13")
        root = os.path.join(self.tmp, "tree")
        os.makedirs(os.path.join(root, "sub", "deeper"))
        shutil.copy(dyn, os.path.join(root, "app"))
        shutil.copy(lib, os.path.join(root, "sub", "deeper", "libprobe.so.1"))
        os.symlink("libprobe.so.1", os.path.join(root, "sub", "deeper", "libprobe.so"))
        os.symlink("sub", os.path.join(root, "loop"))  # directory links are not followed
        with open(os.path.join(root, "README"), "w") as fh:
            fh.write("not ELF\n")
        with open(os.path.join(root, "sub", "data.bin"), "wb") as fh:
            fh.write(b"\x00" * 100)
        rc, doc, _ = self.run_json(root)
        paths = [f["path"] for f in doc["files"]]
        self.assertEqual(paths, [os.path.join(root, "app"),
                                 os.path.join(root, "sub", "deeper", "libprobe.so.1")])
        self.assertEqual(doc["summary"]["skipped_not_elf"], 2)
        self.assertEqual(doc["summary"]["files"], 2)
        self.assertEqual(doc["verdict"], "partial")  # app: partial; the library: ok
        worst = max((f["exit_status"] for f in doc["files"]))
        self.assertEqual(rc, worst)

    def test_fake_wheel_tree(self):
        dyn = self.need("CHECK_LIB13")
        kern = self.need("CHECK_NVCC_kernels_shared")
        cudart = os.path.join(ENV["CHECK_CUDA_LIB_DIR"], "libcudart.so.13")
        sp = os.path.join(self.tmp, "site-packages")
        layout = {
            "torchish/__init__.py": b"from . import _C\n",
            "torchish/lib/libtorchish_cuda.so": dyn,
            "torchish/_ext.cpython-311-x86_64-linux-gnu.so": kern,
            "torchish-1.0.dist-info/RECORD": b"torchish/__init__.py,,\n",
            "torchish-1.0.dist-info/METADATA": b"Name: torchish\n",
            "nvidia/cuda_runtime/lib/libcudart.so.13": cudart,
        }
        for rel, src in layout.items():
            dst = os.path.join(sp, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            if isinstance(src, bytes):
                with open(dst, "wb") as fh:
                    fh.write(src)
            else:
                shutil.copy(src, dst)
        rc, doc, _ = self.run_json(sp)
        by = {os.path.relpath(f["path"], sp): f for f in doc["files"]}
        self.assertEqual(set(by), {"torchish/lib/libtorchish_cuda.so",
                                   "torchish/_ext.cpython-311-x86_64-linux-gnu.so",
                                   "nvidia/cuda_runtime/lib/libcudart.so.13"})
        self.assertEqual(by["nvidia/cuda_runtime/lib/libcudart.so.13"]["verdict"], "replaced")
        self.assertEqual(by["torchish/_ext.cpython-311-x86_64-linux-gnu.so"]["verdict"],
                         "needs-port")
        self.assertEqual(doc["summary"]["skipped_not_elf"], 3)
        self.assertEqual(doc["summary"]["verdicts"]["needs-port"], 1)
        self.assertEqual((doc["verdict"], rc), ("needs-port", 2))
        rc2, out, _ = self.run_tool("--summary", sp)
        self.assertEqual(rc2, rc)
        lines = [l for l in out.splitlines() if l.startswith(sp)]
        self.assertEqual(len(lines), 3, out)
        self.assertIn("3 files checked", out)

    # --- bad input ----------------------------------------------------------------------------
    def test_errors_name_the_file_and_the_problem(self):
        dyn = self.need("CHECK_DYN13")
        with open(dyn, "rb") as fh:
            data = fh.read()
        cases = {
            "truncated": (data[: len(data) // 2], "truncated?"),
            "header_only": (data[:40], "truncated ELF header"),
            "text.txt": (b"hello\n", "not an ELF file"),
            "empty": (b"", "empty file"),
            "pkg.whl": (b"PK\x03\x04" + b"\x00" * 60, "unpack it first"),
            "libfoo.a": (b"!<arch>\n", "ar archive"),
        }
        for name, (content, message) in cases.items():
            p = os.path.join(self.tmp, name)
            with open(p, "wb") as fh:
                fh.write(content)
            rc, doc, err = self.run_json(p)
            f = self.one(doc)
            self.assertEqual((f["verdict"], rc), ("error", 3), name)
            self.assertIn(message, f["error"], name)
            self.assertIn(p, err, name)
            self.assertIn(message, err, name)
        fifo = os.path.join(self.tmp, "fifo")
        os.mkfifo(fifo)  # must not block the check
        rc, doc, err = self.run_json(fifo)
        self.assertEqual((rc, self.one(doc)["error"]), (3, "not a regular file"))
        missing = os.path.join(self.tmp, "does-not-exist")
        rc, doc, err = self.run_json(missing)
        self.assertEqual(rc, 3)
        self.assertIn("No such file or directory", self.one(doc)["error"])
        # An error wins over needs-port in the exit status: the check was incomplete.
        kern = ENV.get("CHECK_NVCC_kernels_shared")
        if kern and os.path.exists(kern):
            rc, doc, _ = self.run_json(kern, missing)
            self.assertEqual((doc["verdict"], rc), ("error", 3))

    def test_usage_errors(self):
        self.assertEqual(self.run_tool()[0], 4)
        rc, _, err = self.run_tool("--nope", "x")
        self.assertEqual(rc, 4)
        self.assertIn("unknown option --nope", err)
        empty = os.path.join(self.tmp, "empty_symbols")
        os.makedirs(empty)
        rc, _, err = self.run_tool("--symbols-dir", empty, TOOL)
        self.assertEqual(rc, 4)
        self.assertIn("no symbols table", err)

    def test_help_documents_exit_statuses(self):
        rc, out, _ = self.run_tool("--help")
        self.assertEqual(rc, 0)
        section = out.split("EXIT STATUS", 1)[1].split("EXAMPLES", 1)[0]
        for code in range(6):
            self.assertRegex(section, rf"\n    {code}  ")
        for verdict in ("ok", "partial", "needs-port", "replaced", "not-cuda", "error",
                        "will-not-load"):
            self.assertRegex(out, rf"\n    {verdict} ")

    # --- the tables ---------------------------------------------------------------------------
    def test_symbols_dir_overrides_embedded_tables(self):
        path = self.need("CHECK_DYN13")
        alt = os.path.join(self.tmp, "alt")
        os.makedirs(alt)
        with open(os.path.join(ENV["CHECK_SYMBOLS"], "cudart.txt")) as src, \
                open(os.path.join(alt, "cudart.txt"), "w") as dst:
            for line in src:
                if line.startswith("cudaMalloc "):
                    line = "cudaMalloc 12,13 unsupported - refused for this test\n"
                dst.write(line)
        rc, doc, _ = self.run_json("--symbols-dir", alt, path)
        m = [i for i in self.one(doc)["imports"] if i["name"] == "cudaMalloc"][0]
        self.assertEqual((m["category"], m["reason"]), ("unsupported", "refused for this test"))
        self.assertEqual(doc["tables"]["source"], alt)
        rc, doc, _ = self.run_json(path)
        m = [i for i in self.one(doc)["imports"] if i["name"] == "cudaMalloc"][0]
        self.assertEqual(m["category"], "forwarded")
        self.assertEqual(doc["tables"]["source"], "embedded")

    def test_embedded_tables_match_the_source_files(self):
        rc, doc, _ = self.run_json(TOOL)  # the tool itself: not CUDA
        self.assertEqual((self.one(doc)["verdict"], rc), ("not-cuda", 0))
        got = {t["file"]: t["rows"] for t in doc["tables"]["files"]}
        want = {f"{stem}.txt": sum(len(v) for v in rows.values())
                for stem, rows in self.tables.items()}
        self.assertEqual(got, want)
        for t in doc["tables"]["files"]:
            self.assertEqual(t["warnings"], [], t["file"])
        rc, out, _ = self.run_tool("--list-tables")
        self.assertEqual(rc, 0)
        self.assertRegex(out, rf"cudart\.txt\s+libcudart\.so\s+versions 12,13\s+{want['cudart.txt']} rows")


if __name__ == "__main__":
    if not TOOL:
        sys.exit("CHECK_TOOL is not set (run through ctest)")
    unittest.main(verbosity=2)
