#!/bin/sh
# The heap's lifecycle (lifecycle.c) is the top of the collector's call graph and heap.c its
# ground floor: no other collector file may call creation, destruction or gc_set_params, and
# heap.c may include no collector header but heap.h and pool_layout.h (so it calls nothing above
# it). Arguments: the collector's .c files.
status=0
for f in "$@"; do
  case "$f" in
    */lifecycle.c) continue ;;
  esac
  if grep -n 'gc_heap_create\s*(\|gc_heap_destroy\s*(\|gc_set_params\s*(' "$f"; then
    echo "$f calls the heap's lifecycle (gc/lifecycle.c), which calls every file: a call cycle" >&2
    status=1
  fi
  case "$f" in
    */heap.c)
      if grep -n '#include "gc/' "$f" | grep -v '"gc/heap.h"\|"gc/pool_layout.h"'; then
        echo "$f (the ground floor) includes a collector header above it" >&2
        status=1
      fi
      ;;
  esac
done
[ $status = 0 ] && echo "lifecycle on top, heap.c at the bottom: $# files checked"
exit $status
