"""gcfuzz's CI program: ci/test, ci/campaign, ci/bench and ci/mutants/run (see ci/README.md)."""
