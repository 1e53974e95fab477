"""The rare events' census (event_census.py): the replay's line parsed, targets summed, the
events that never happened named; bad lines refused; its section of the campaign page."""
import json
import os
import tempfile
import unittest

from .. import event_census, report_html


def line(programs, **events):
  return "== run\nGCFUZZ-EVENTS " + json.dumps({"programs": programs, "events": {
      k.replace("_", "."): v for k, v in events.items()}}) + "\n"


class EventCensusTest(unittest.TestCase):
  def test_the_last_line_counts(self):
    out = line(1, cycle=1) + "noise\n" + line(3, cycle=7, mark_recheck=2)
    self.assertEqual(event_census.parse(out),
                     {"programs": 3, "events": {"cycle": 7, "mark.recheck": 2}})

  def test_missing_or_malformed_lines_are_errors(self):
    for out in ("== run\n", "GCFUZZ-EVENTS {not json\n", 'GCFUZZ-EVENTS {"programs": 1}\n',
                'GCFUZZ-EVENTS {"programs": "x", "events": {}}\n'):
      with self.assertRaises(event_census.EventsError):
        event_census.parse(out)

  def test_targets_are_summed_and_the_never_named(self):
    c = event_census.combine({
        "graph": event_census.parse(line(5, cycle=10, mark_recheck=0, compaction=3)),
        "schedule": event_census.parse(line(2, cycle=4, mark_recheck=1, compaction=0))})
    self.assertEqual(c["cycles"], 14)
    self.assertEqual(c["programs"], {"graph": 5, "schedule": 2})
    rows = {r["event"]: r for r in c["events"]}
    self.assertEqual(rows["mark.recheck"]["total"], 1)
    self.assertEqual(rows["compaction"]["targets"], {"graph": 3, "schedule": 0})
    self.assertEqual(c["never"], [])
    c = event_census.combine({"graph": event_census.parse(line(1, cycle=2, mark_ceiling=0))})
    self.assertEqual(c["never"], ["mark.ceiling"])
    text = "\n".join(event_census.text_lines(c, "seeds"))
    self.assertIn("never happened (1): mark.ceiling", text)
    self.assertRegex(text, r"mark\.ceiling +0 +0 +-   never")
    self.assertRegex(text, r"cycle +2 +2 +1\.000")

  def test_the_page_shows_the_events(self):
    c = event_census.combine({"graph": event_census.parse(line(1, cycle=2, mark_ceiling=0))})
    c["what"] = "seeds"
    with tempfile.TemporaryDirectory() as d:
      with open(os.path.join(d, "summary.json"), "w") as f:
        json.dump({"interrupted": False, "targets": [], "events": c}, f)
      page = report_html.campaign_html(d)
    self.assertIn("rare events of the collector", page)
    self.assertIn("1 of 2 events never happened", page)
    self.assertIn('<span class="bad">mark.ceiling</span>', page)


class CollectorsTest(unittest.TestCase):
  def test_targets_are_grouped_by_the_collector_they_drive(self):
    per = {"graph": event_census.parse(line(1, cycle=2, mark_recheck=1)),
           "gcfuzz": event_census.parse(line(2, cycle=3, mark_recheck=0)),
           "lua": event_census.parse(line(4, cycle=5, emergency=0, gen_minor=7))}
    tables = event_census.by_collector(
        per, lambda t: t if t in ("lua", "bdwgc") else "gcfuzz")
    self.assertEqual(list(tables), ["gcfuzz", "lua"])
    self.assertEqual(tables["gcfuzz"]["programs"], {"graph": 1, "gcfuzz": 2})
    self.assertEqual(tables["gcfuzz"]["cycles"], 5)
    self.assertEqual(tables["lua"]["never"], ["emergency"])
    self.assertEqual(tables["lua"]["collector"], "lua")
    text = "\n".join(event_census.text_lines(tables["lua"], "seeds"))
    self.assertIn("==== rare events of lua's collector (seeds; lua 4 programs)", text)
    self.assertRegex(text, r"gen\.minor +7 +7 +1\.400")
    self.assertIn("rare events of the collector", event_census.text_lines(tables["gcfuzz"], "x")[0])

  def test_the_page_shows_each_backend_table(self):
    lua = event_census.by_collector({"lua": event_census.parse(line(1, cycle=2, emergency=0))},
                                    lambda t: t)["lua"]
    lua["what"] = "seeds"
    with tempfile.TemporaryDirectory() as d:
      with open(os.path.join(d, "summary.json"), "w") as f:
        json.dump({"interrupted": False, "targets": [], "backend_events": {"lua": lua}}, f)
      page = report_html.campaign_html(d)
    self.assertIn('<h2 id="events-lua">rare events of lua&#x27;s collector</h2>', page)
    self.assertIn('<span class="bad">emergency</span>', page)


if __name__ == "__main__":
  unittest.main()
