#!/bin/sh
# The driver's files call downwards only (fuzz/driver/state.h lists the layers): each may include
# the driver headers of the layers below it and none above, so there is no include or call cycle
# between them. Arguments: the driver's .c and .h files (tests excluded).
layer() { # FILE -> its layer, bottom 0
  case "$(basename "$1")" in
    driver.h) echo 0 ;; # the public types and entry points (implemented by run.c, sanitizer.c)
    state.h | state.c) echo 1 ;;
    sanitizer.c) echo 2 ;;
    verdict.h | verdict.c) echo 2 ;;
    corrupt_op.h | corrupt_op.c) echo 3 ;;
    params_op.h | params_op.c) echo 3 ;;
    in_collection.h | in_collection.c) echo 3 ;;
    semantics.h | semantics.c) echo 4 ;;
    threads.h | threads.c) echo 5 ;;
    run.c) echo 6 ;;
    *) echo "?" ;;
  esac
}
status=0
for f in "$@"; do
  mine=$(layer "$f")
  if [ "$mine" = "?" ]; then
    echo "$f: a driver file with no layer: give it one here and in state.h" >&2
    status=1
    continue
  fi
  for inc in $(sed -n 's|^#include "fuzz/driver/\([a-z_]*\.h\)".*|\1|p' "$f"); do
    theirs=$(layer "$inc")
    own="$(basename "$f" .c).h"
    [ "$inc" = "$own" ] && continue # a file's own header
    if [ "$theirs" = "?" ] || [ "$theirs" -ge "$mine" ] && [ "$inc" != "driver.h" ]; then
      echo "$f (layer $mine) includes fuzz/driver/$inc (layer $theirs): not below it" >&2
      status=1
    fi
  done
  if grep -n '#include "fuzz/replay\|#include "fuzz/targets' "$f"; then
    echo "$f includes the replay tool or a target, which sit above the driver" >&2
    status=1
  fi
done
[ $status = 0 ] && echo "the driver's files include downwards only: $# files checked"
exit $status
