"""Lab VMs only: a bytecode cache for Python sources imported from zip files.

Every Ansible module call sends its code to the host as a zip (AnsiballZ),
which Python imports with zipimport, compiling every source file in it from
scratch: a zip carries no __pycache__. On the lab's TCG-emulated CPU that
compile is a large part of each module call. This hook keeps each compiled
source in a root-only directory, keyed by the SHA-256 of the interpreter's
bytecode magic number and the source bytes, and gives the cached code object
the file name of the import that asks for it. The code that runs is the code
a fresh compile gives; only the compiling is skipped. Loaded at interpreter
start by rdma_lab_zip_pyc.pth; inactive for users who cannot write the cache
(only root can). Measured with benchmarks/module_call.py.

This file is part of the lab image (tools/lab/guest), not of the collection.
"""
import os
import zipimport

CACHE_DIR = "/var/cache/rdma-lab-zip-pyc"
_compile_source = zipimport._compile_source


def _relabel(code, filename):
    consts = tuple(_relabel(c, filename) if isinstance(c, type(code)) else c for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


def _cached_compile_source(pathname, source):
    import hashlib
    import marshal
    from importlib._bootstrap_external import MAGIC_NUMBER

    path = os.path.join(CACHE_DIR, hashlib.sha256(MAGIC_NUMBER + source).hexdigest())
    try:
        with open(path, "rb") as f:
            return _relabel(marshal.load(f), pathname)
    except (OSError, ValueError, EOFError, TypeError):
        pass
    code = _compile_source(pathname, source)
    tmp = "%s.%d.tmp" % (path, os.getpid())
    try:
        with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as f:
            marshal.dump(code, f)
        os.replace(tmp, path)
    except OSError:
        pass
    return code


if os.access(CACHE_DIR, os.W_OK):
    zipimport._compile_source = _cached_compile_source
