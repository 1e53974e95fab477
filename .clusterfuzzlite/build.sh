#!/bin/bash -eu
# ClusterFuzzLite's build script: its Dockerfile copies this file to $SRC/build.sh and the
# checkout to $SRC/gcfuzz. The build itself is ci/oss-fuzz/build.sh, the one OSS-Fuzz runs.
exec "${SRC:-/src}/gcfuzz/ci/oss-fuzz/build.sh" "$@"
