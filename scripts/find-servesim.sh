# scripts/find-servesim.sh — sourced by the experiment scripts: `find_servesim ROOT [BIN]`
# prints BIN, or the first servesim binary built under ROOT (release, then dev); exits the
# calling script with status 1 and a message when there is none.
find_servesim() {
  local root=$1 bin=${2:-} b
  if [ -z "$bin" ]; then
    for b in "$root/build/release/servesim" "$root/build/dev/servesim"; do
      [ -x "$b" ] && { bin=$b; break; }
    done
  fi
  [ -n "$bin" ] && [ -x "$bin" ] || {
    echo "$(basename "$0"): no servesim binary (build first, or --servesim BIN)" >&2
    exit 1
  }
  printf '%s\n' "$bin"
}
