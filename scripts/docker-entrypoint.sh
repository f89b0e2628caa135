#!/bin/sh
# Container entrypoint: runs the container's command under torchada-run, so that every process
# in the container reaches torchada.
#
#   ENTRYPOINT ["torchada-docker-entrypoint"]     (installed name; scripts/Dockerfile shows one)
#   CMD ["python3", "train.py"]
#
#   docker run -e TORCHADA_BACKEND=sim IMAGE python3 -c '...'
#
# The TORCHADA_* variables (TORCHADA_BACKEND, TORCHADA_LOG_LEVEL, TORCHADA_STATS, ...) reach
# torchada through the environment unchanged. TORCHADA_DISABLE=1 runs the command exactly as
# given, with nothing added to its environment. The launcher is $TORCHADA_RUN, else
# torchada-run next to this script, else torchada-run on PATH.
# Exit status: the command's; 125 when there is no command or no launcher.
set -eu

if [ "$#" -eq 0 ]; then
  echo "torchada entrypoint: no command given. Pass one after the image name" \
    "(docker run IMAGE python3 train.py) or set CMD in the Dockerfile." >&2
  exit 125
fi

# A flag as settings/settings.h reads it (the audit module and the shim agree): 1, true, yes, on.
case ${TORCHADA_DISABLE:-} in
  1 | [Tt][Rr][Uu][Ee] | [Yy][Ee][Ss] | [Oo][Nn]) exec "$@" ;;
esac

launcher=${TORCHADA_RUN:-}
if [ -z "$launcher" ]; then
  here=$(dirname -- "$0")
  if [ -x "$here/torchada-run" ]; then
    launcher=$here/torchada-run
  elif command -v torchada-run >/dev/null 2>&1; then
    launcher=$(command -v torchada-run)
  else
    echo "torchada entrypoint: torchada-run not found (next to $0 or on PATH); set TORCHADA_RUN" \
      "or install torchada in the image. TORCHADA_DISABLE=1 runs the command without torchada." >&2
    exit 125
  fi
fi
exec "$launcher" -- "$@"
