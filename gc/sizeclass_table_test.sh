#!/bin/sh
# Fails when gc/sizeclass_table.h was edited by hand or the generator changed without a regen.
if ! diff -u "$1" "$2"; then
  echo "gc/sizeclass_table.h is stale: bazel run //gc:sizeclass_gen > gc/sizeclass_table.h" >&2
  exit 1
fi
echo "sizeclass table matches its generator"
