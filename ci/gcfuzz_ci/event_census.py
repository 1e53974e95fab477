"""The census of a collector's rare events: how often each rare path of a cycle ran over a
corpus, from the replay tool's `GCFUZZ-EVENTS {json}` line (replay --events), per target and in
all. gcfuzz's collector's events are gc.h's GC_EVENTS (the program targets and the gcfuzz
interface targets); another collector's are its backend's own table (fuzz/backend/backend.h,
rare_events: lua's, bdwgc's), so the census is one table per collector. An event a corpus never
makes happen is a path its fuzzer never tries."""
import json

MARKER = "GCFUZZ-EVENTS "


class EventsError(Exception):
  pass


def parse(output):
  """The last GCFUZZ-EVENTS line of a replay's output: {"programs": N, "events": {name: n}}."""
  found = None
  for line in output.splitlines():
    if line.startswith(MARKER):
      found = line[len(MARKER):]
  if found is None:
    raise EventsError("the replay printed no GCFUZZ-EVENTS line")
  try:
    data = json.loads(found)
  except ValueError as e:
    raise EventsError("a malformed GCFUZZ-EVENTS line: %s" % e)
  if not isinstance(data.get("events"), dict) or not isinstance(data.get("programs"), int):
    raise EventsError("a GCFUZZ-EVENTS line without programs and events")
  return data


def combine(per_target):
  """{target: parsed} -> the census: the events in the replay's order, per target and summed,
  and the events no target made happen."""
  names = []
  for data in per_target.values():
    for name in data["events"]:
      if name not in names:
        names.append(name)
  rows = []
  for name in names:
    counts = {t: int(d["events"].get(name, 0)) for t, d in per_target.items()}
    rows.append({"event": name, "targets": counts, "total": sum(counts.values())})
  cycles = sum(int(d["events"].get("cycle", 0)) for d in per_target.values())
  programs = {t: d["programs"] for t, d in per_target.items()}
  return {"programs": programs, "cycles": cycles, "events": rows,
          "never": [r["event"] for r in rows if r["total"] == 0]}


def by_collector(per_target, collector_of):
  """{target: parsed} -> {collector: its census}: the targets grouped by the collector they
  drive (collector_of(target)), in the order the targets come, each group combined alone (two
  collectors' events are different tables), each census naming its collector."""
  groups = {}
  for t, data in per_target.items():
    groups.setdefault(collector_of(t), {})[t] = data
  result = {}
  for collector, targets in groups.items():
    result[collector] = combine(targets)
    result[collector]["collector"] = collector
  return result


def title(census):
  """The census's heading: gcfuzz's collector is "the collector", as before backends had one."""
  collector = census.get("collector", "gcfuzz")
  return "the collector" if collector == "gcfuzz" else "%s's collector" % collector


def text_lines(census, what):
  targets = list(census["programs"])
  out = ["==== rare events of %s (%s; %s programs)" % (
      title(census), what, ", ".join("%s %d" % (t, n) for t, n in census["programs"].items()))]
  header = "  %-28s" % "event" + "".join(" %10s" % t[:10] for t in targets) + " %10s %9s" % (
      "total", "per cycle")
  out.append(header)
  for r in census["events"]:
    per = ("%9.3f" % (r["total"] / census["cycles"]) if census["cycles"] and r["total"]
           else "%9s" % "-")
    out.append("  %-28s" % r["event"] + "".join(" %10d" % r["targets"][t] for t in targets) +
               " %10d %s%s" % (r["total"], per, "   never" if r["total"] == 0 else ""))
  if census["never"]:
    out.append("  never happened (%d): %s" % (len(census["never"]), ", ".join(census["never"])))
  return out
