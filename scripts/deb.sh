#!/bin/bash
# Build the Debian package with Debian's own tooling (dpkg-buildpackage -us -uc -b,
# debhelper) from a copy of the source tree, so neither the tree nor its parent directory
# gets build products: everything lands in build/deb/ (OUT=... moves it).
#   scripts/deb.sh            -> build/deb/keyrouter_VERSION_ARCH.deb, then lintian's verdict
#   KR_DEB_LINTIAN=0 scripts/deb.sh   skip lintian
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-build}
version=$(dpkg-parsechangelog -S Version)
dir=$OUT/deb
src=$dir/keyrouter-$version
rm -rf "$dir"
mkdir -p "$src"
# tracked and new (not ignored) files, as they are in the working tree
git ls-files -z --cached --others --exclude-standard | grep -zv '^build/' |
	xargs -0 tar -cf - --no-recursion | tar -xf - -C "$src"
(cd "$src" && dpkg-buildpackage -us -uc -b >../build.log 2>&1) || {
	tail -40 "$dir/build.log" >&2
	echo "deb.sh: dpkg-buildpackage failed (whole log: $dir/build.log)" >&2
	exit 1
}
rm -rf "$src"
deb=$(ls "$dir"/keyrouter_"$version"_*.deb)
echo "deb: $deb"
if [ "${KR_DEB_LINTIAN:-1}" = 1 ] && command -v lintian >/dev/null; then
	lintian --fail-on error --display-info "$dir"/keyrouter_"$version"_*.changes >"$dir/lintian.log" 2>&1 && rc=0 || rc=$?
	cat "$dir/lintian.log"
	echo "lintian: $(grep -c '^E:' "$dir/lintian.log" || true) errors, $(grep -c '^W:' "$dir/lintian.log" || true) warnings, $(grep -c '^I:' "$dir/lintian.log" || true) info"
	exit "$rc"
fi
