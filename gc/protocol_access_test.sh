#!/bin/bash
# Every access to a protocol word in gc/ goes through a scheduling point of gc/platform.h (the
# rule of the layer, at the top of platform.h), so that the controlled scheduler can put another
# thread between any two of them. This test lists the protocol words and fails on any access to
# them that is not the argument of a point form, outside the listed exemptions. It then plants
# bypasses in copies of the collector's files and requires each to be reported (the check is
# shown to fail). Arguments: the collector's .c and .h files (platform.*, gc.h and tests are
# skipped: gc.h is the public API, whose gc_stats fields share some names).
#
# Grep-level, on purpose: it reads each line with comments and strings removed, tracks which
# function it is in (a definition starts at column 0), and looks at the text only. It cannot see
# an access through a pointer to the word (pass `&heap->stw_requested` to a helper and it sees
# the argument, which it then requires to be a point form's).

# Protocol words: name, then an ERE matching an access (awk has no \b: a word boundary is
# spelled out). heap->domain_count is special: written under stw_lock and read without it, its
# writes and its unlocked reads are points; the lock holder's plain reads are allowed in the
# functions listed below.
FIELDS='
state|->state([^A-Za-z0-9_]|$)
stw_requested|stw_requested
work.done|(work\.|w->)done([^A-Za-z0-9_]|$)
work.idle|(work\.|w->)idle([^A-Za-z0-9_]|$)
work.full_count|(work\.|w->)full_count
work.overflowed|(work\.|w->)overflowed
work.slicing|(work\.|w->)slicing
running_finalizers|running_finalizers
large_index.stale|(ix->|large_index\.)stale
orphans|(orphans\.|o->)(avail|full|large)([^A-Za-z0-9_]|$)
free_pools|heap->free_pools([^A-Za-z0-9_]|$)
work.lists|(work\.|w->)(empty|full)([^A-Za-z0-9_]|$)
domain_count|domain_count
marking|heap->marking([^A-Za-z0-9_]|$)
mark_parallel|(heap->|d->heap->)mark_parallel([^A-Za-z0-9_]|$)
'

# Exemptions: file:function:word, and why. Keep it short; each line is a claim a reviewer checks.
EXEMPT='
domain.c:gc_domain_new:state             before publication: the domain is not on the list yet
orphan.c:gc_orphan_adopt_all:orphans     the world is stopped and stw_lock held: no other thread runs
workbuf.c:gc_work_shape:work.lists           the leader, with the world stopped, before any marker starts
workbuf.c:gc_work_free:work.lists            the heap is being destroyed: no other thread uses it
lifecycle.c:gc_heap_destroy:orphans      the heap is being destroyed: no other thread uses it
blockindex.c:rebuild_large:orphans       conservative marking: the world is stopped
blockindex.c:large_containing:orphans    conservative marking: the world is stopped
blockindex.c:rebuild_large:domain_count       stw_lock held (the world is stopped)
blockindex.c:large_containing:domain_count    stw_lock held (the world is stopped)
cycle.c:freed_words_total:domain_count        stw_lock held
cycle.c:sweep_everywhere:domain_count         stw_lock held
cycle.c:sweep_before_the_stop:domain_count    stw_lock held
cycle.c:allocated_total:domain_count          stw_lock held
cycle.c:none_marking:marking                  stw_lock held: marking changes only under it
domain.c:gc_domain_list_add:marking           stw_lock held: marking changes only under it
domain.c:gc_domain_terminate:marking          stw_lock held: marking changes only under it
roots.c:marking_now:marking                   the caller runs a domain: marking changes only while all are stopped
cycle.c:end_of_mark:domain_count              stw_lock held
cycle.c:set_marking:domain_count              stw_lock held
cycle.c:reported_words:domain_count           stw_lock held (the perf counters, world stopped)
domain.c:gc_domain_list_add:domain_count      stw_lock held: the only writer reads its own word
domain.c:list_remove:domain_count             stw_lock held: the only writer reads its own word
heap.c:gc_heap_sum_stats:domain_count         world stopped or one domain (its documented contract)
heap.c:gc_get_stats:domain_count              world stopped or one domain (gc_heap_sum_stats)
lifecycle.c:gc_heap_destroy:domain_count      the heap is being destroyed: no other thread uses it
mark.c:*:domain_count                         marking: stw_lock held by the leader, the world stopped
ephemeron_mark.c:gc_ephe_round_all:domain_count   marking: stw_lock held by the leader, the world stopped
ephemeron_mark.c:clean_lists:domain_count         the clean phase: stw_lock held, the world stopped
stw.c:gc_stw_begin:domain_count               stw_lock held
compact.c:*:domain_count                      compaction: stw_lock held by the leader, the world stopped
compact.c:*:orphans                           compaction: stw_lock held by the leader, the world stopped
stw.c:gc_stw_end:domain_count                 stw_lock held
'

POINT_FORMS='(gc_atomic_(load|store|cas|fetch_add|fetch_sub)|gc_safepoint_load)[(]&'
GUARDED_FORMS='GC_GUARDED_(LOAD|STORE)[(]'

# check FILE...: prints each bypass as file:line: function: word: text; exit 1 if any.
check() {
  awk -v fields="$FIELDS" -v exempt="$EXEMPT" -v point="$POINT_FORMS" -v guarded="$GUARDED_FORMS" '
    BEGIN {
      n = split(fields, lines, "\n")
      for (i = 1; i <= n; i++) {
        if (lines[i] == "") continue
        k = index(lines[i], "|")
        nf++
        fname[nf] = substr(lines[i], 1, k - 1)
        fre[nf] = substr(lines[i], k + 1)
      }
      n = split(exempt, lines, "\n")
      for (i = 1; i <= n; i++) {
        split(lines[i], w, " ")
        if (w[1] != "") ex[w[1]] = 1
      }
      status = 0
    }
    FNR == 1 { in_comment = 0; fn = "(file scope)"; base = FILENAME; sub(/.*\//, "", base) }
    {
      line = $0
      # Comments and string literals out (block comments may span lines).
      out = ""
      while (line != "") {
        if (in_comment) {
          e = index(line, "*/")
          if (e == 0) { line = ""; break }
          line = substr(line, e + 2); in_comment = 0; continue
        }
        s = index(line, "/*"); c = index(line, "//"); q = index(line, "\"")
        first = 0
        if (s && (!first || s < first)) first = s
        if (c && (!first || c < first)) first = c
        if (q && (!first || q < first)) first = q
        if (!first) { out = out line; break }
        out = out substr(line, 1, first - 1)
        if (first == s) { line = substr(line, s + 2); in_comment = 1 }
        else if (first == c) { line = "" }
        else {
          rest = substr(line, q + 1)
          while (match(rest, /^([^"\\]|\\.)*"/) == 0 && rest != "") rest = ""
          line = substr(rest, RLENGTH + 1)
        }
      }
      code = out
      # A function definition starts at column 0: its name is the identifier before "(".
      if (code ~ /^[A-Za-z_].*[(]/ && code !~ /;[ \t]*$/ && code !~ /^(typedef|struct|enum|#)/) {
        head = code; sub(/[(].*/, "", head); sub(/.*[^A-Za-z0-9_]/, "", head)
        if (head != "") fn = head
      }
      # A field declaration (in heap.h) is no access.
      if (code ~ /^[ \t]*[A-Za-z_][A-Za-z0-9_ ]*[ *][A-Za-z_][A-Za-z0-9_]*;[ \t]*$/) next
      for (i = 1; i <= nf; i++) {
        if (code !~ fre[i]) continue
        rest = code
        # Every access that is the argument of a point form is fine: take those out.
        gsub(point "[A-Za-z0-9_>.()\\[\\] -]*" fre[i], "", rest)
        gsub(guarded "[A-Za-z0-9_>.()\\[\\] -]*" fre[i], "", rest)
        if (rest !~ fre[i]) continue
        if ((base ":" fn ":" fname[i]) in ex || (base ":*:" fname[i]) in ex) continue
        printf "%s:%d: %s: %s not through a scheduling point of gc/platform.h: %s\n", \
               FILENAME, FNR, fn, fname[i], $0
        status = 1
      }
    }
    END { exit status }
  ' "$@"
}

files=()
for f in "$@"; do
  case "$f" in
    */platform.h | */platform.c | */gc.h | *_test.c | */sizeclass_gen.c) ;;
    *) files+=("$f") ;;
  esac
done

status=0
if ! check "${files[@]}"; then
  echo "a protocol word is accessed without a scheduling point (rule: the top of gc/platform.h)" >&2
  status=1
fi

# The check can fail: plant one bypass at a time in a copy of its file and require a report.
scratch=$(mktemp -d "${TEST_TMPDIR:-/tmp}/protocol.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
plant() { # plant NAME FILE SED-EXPRESSION
  local name=$1 file=$2 expr=$3 src=
  for f in "${files[@]}"; do [ "${f##*/}" = "$file" ] && src=$f; done
  if [ -z "$src" ]; then
    echo "plant $name: no $file among the arguments" >&2
    status=1
    return
  fi
  mkdir -p "$scratch/$name"
  sed -E "$expr" "$src" > "$scratch/$name/$file"
  if cmp -s "$src" "$scratch/$name/$file"; then
    echo "plant $name: the expression changed nothing in $file (the code moved: update it)" >&2
    status=1
  elif check "$scratch/$name/$file" > "$scratch/$name/out"; then
    echo "plant $name: a bypass in $file was not reported" >&2
    status=1
  else
    echo "plant $name: reported: $(head -1 "$scratch/$name/out" | sed 's/.*: \([a-z_.]* not through\)/\1/')"
  fi
}
# A safepoint reading the stop request relaxed, with no point.
plant relaxed-stop-request stw.c \
  's/gc_safepoint_load\(&d->heap->stw_requested, d\)/gc_atomic_load_relaxed(\&d->heap->stw_requested)/'
# A check-then-act on a domain's state with a plain store.
plant plain-state-store domain.c 's/gc_atomic_store\(&d->state, GC_DOMAIN_BLOCKING\)/d->state = GC_DOMAIN_BLOCKING/'
# An orphan list head read as plain memory (before or under the lock: the text is the same).
plant plain-orphan-head orphan.c 's/GC_GUARDED_LOAD\(o->avail\[c\]\);/o->avail[c];/'
# A marker reading `done` relaxed.
plant relaxed-done workbuf.c 's/gc_atomic_load\(&w->done\)\) break/gc_atomic_load_relaxed(\&w->done)) break/'
# A work list head read as plain memory.
plant plain-work-head workbuf.c 's/GC_GUARDED_LOAD\(w->full\);/w->full;/'
# A count read through the cheap form, outside any exempt function.
plant relaxed-domain-count sweep.c 's/gc_atomic_load\(&heap->domain_count\)/gc_atomic_load_relaxed(\&heap->domain_count)/'

[ $status = 0 ] && echo "every protocol access goes through gc/platform.h: ${#files[@]} files checked"
exit $status
