#!/usr/bin/env bash
# Installs the staged Python package (BUILD_DIR/python/hexplan: the module and python/hexplan/*)
# for PYTHON (default Debian's /usr/bin/python3), so that `python3 -c "import hexplan"` works.
# The destination is the interpreter's site-packages (/usr/local/lib/python3.X/dist-packages on
# Debian) when writable (root, as on CI), else the user's site-packages. Usage:
#   install-python.sh BUILD_DIR [PYTHON]
set -euo pipefail
build=${1:?usage: install-python.sh BUILD_DIR [PYTHON]}
python=${2:-/usr/bin/python3}
src="$build/python/hexplan"
ls "$src"/_core*.so >/dev/null 2>&1 || { echo "install-python.sh: no module in $src (build target hexplan_python)" >&2; exit 2; }
dest=$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
if ! { mkdir -p "$dest" && [ -w "$dest" ]; } 2>/dev/null; then
  dest=$("$python" -c 'import site; print(site.getusersitepackages())')
  mkdir -p "$dest"
fi
rm -rf "$dest/hexplan.new"
cp -r "$src" "$dest/hexplan.new"
rm -rf "$dest/hexplan.new/__pycache__"
rm -rf "$dest/hexplan"
mv "$dest/hexplan.new" "$dest/hexplan"
echo "hexplan: Python package installed in $dest/hexplan (for $python)"
