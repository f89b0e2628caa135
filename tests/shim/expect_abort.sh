#!/bin/sh
# Runs "$@" and succeeds only if it died of SIGABRT (exit status 134 through the shell).
"$@"
rc=$?
echo "exit=$rc"
[ "$rc" -eq 134 ]
