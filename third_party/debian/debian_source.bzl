"""debian_source: a Bazel repository holding a Debian source package's tree.

The tree comes from fetch-source (beside this file): Debian's archive, Debian's patches applied,
cached outside the workspace. An environment variable may name another tree instead (a copy with
a mutant planted: ci/mutants/run --backend NAME sets it); Bazel fetches the repository again when
it changes. The BUILD file of the tree is the project's (build_file).
"""

def _debian_source_impl(ctx):
    override = ctx.os.environ.get(ctx.attr.override_env, "")
    if override:
        src = ctx.path(override)
        if not src.exists:
            fail("%s=%s: no such directory" % (ctx.attr.override_env, override))
        ctx.symlink(src, "src")
    else:
        script = ctx.path(ctx.attr._fetch)
        res = ctx.execute(
            ["bash", str(script), ctx.attr.package, ctx.attr.version, str(ctx.path("src"))],
            timeout = 600,
            quiet = False,
        )
        if res.return_code != 0:
            fail("fetching Debian source %s=%s failed:\n%s%s" % (
                ctx.attr.package,
                ctx.attr.version,
                res.stdout,
                res.stderr,
            ))
    ctx.symlink(ctx.attr.build_file, "BUILD.bazel")
    ctx.file("WORKSPACE", "workspace(name = \"%s\")\n" % ctx.name)

debian_source = repository_rule(
    implementation = _debian_source_impl,
    attrs = {
        "package": attr.string(mandatory = True),
        "version": attr.string(mandatory = True),
        "build_file": attr.label(mandatory = True, allow_single_file = True),
        "override_env": attr.string(mandatory = True),
        "_fetch": attr.label(default = Label("//third_party/debian:fetch-source")),
    },
    environ = ["GCFUZZ_LUA_SRC", "GCFUZZ_BDWGC_SRC", "GCFUZZ_SOURCE_CACHE"],
    local = False,
)
