#!/usr/bin/env python3
"""Tests of report.py's joining of runs (scripts/bench/run --add-to): python3 scripts/bench/report_test.py"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402


def meta(commit, started, only, sha="aaaa", dirty=False):
    return {"commit": commit, "started": started, "finished": started + 600, "only": only,
            "args": f"--only {only}", "tuttiSha256": sha, "dirty": dirty, "floorSeconds": 60}


class MergeRunsTests(unittest.TestCase):
    def setUp(self):
        self.first = {"meta": meta("c1", 1000, "latency floor"),
                      "results": {"latency-tutti-64-clean": {"n": 1}, "machine-wake": {"run": 1}}}

    def test_a_run_of_another_commit_is_refused(self):
        with self.assertRaises(report.MergeRefused) as refused:
            report.merge_runs(self.first, meta("c2", 5000, "floor"), {"floor-x": {}})
        self.assertIn("c1", str(refused.exception))
        self.assertIn("c2", str(refused.exception))

    def test_a_later_checkout_with_the_same_sources_may_join(self):
        later = meta("c9", 5000, "floor")
        later["sameSourcesAs"] = "c1"
        merged, _ = report.merge_runs(self.first, later, {"floor-x": {}})
        self.assertEqual(merged["commit"], "c1")
        self.assertEqual([r["commit"] for r in merged["runs"]], ["c1", "c9"])

    def test_the_joined_report_keeps_both_runs_results_and_names_what_was_measured_again(self):
        merged, results = report.merge_runs(self.first, meta("c1", 5000, "floor clock", sha="bbbb"),
                                            {"machine-wake": {"run": 2}, "floor-paced-32-clean-3": {"g": 0}})
        self.assertEqual(sorted(results), ["floor-paced-32-clean-3", "latency-tutti-64-clean", "machine-wake"])
        self.assertEqual(results["machine-wake"], {"run": 2})
        self.assertEqual([r["started"] for r in merged["runs"]], [1000, 5000])
        self.assertEqual([r["tuttiSha256"] for r in merged["runs"]], ["aaaa", "bbbb"])
        self.assertEqual(merged["runs"][1]["replaced"], ["machine-wake"])
        self.assertEqual((merged["started"], merged["finished"]), (1000, 5600))
        self.assertEqual(merged["only"], "latency floor clock")

    def test_a_third_run_joins_the_list_and_a_dirty_part_marks_the_report_dirty(self):
        merged, results = report.merge_runs(self.first, meta("c1", 5000, "floor"), {"a": {}})
        merged, results = report.merge_runs({"meta": merged, "results": results},
                                            meta("c1", 9000, "cpu", dirty=True), {"b": {}})
        self.assertEqual(len(merged["runs"]), 3)
        self.assertTrue(merged["dirty"])
        self.assertEqual(set(results), {"latency-tutti-64-clean", "machine-wake", "a", "b"})


def cycles(p1, p99, ppm):
    return {"ppm": ppm, "residualMs": {"p1": p1, "p99": p99}}


def floor_step(step, glitches, near, far):
    return {"floor": "tutti 64 clean", "frames": 64, "step": step, "glitches": glitches, "tool": "tutti", "mode": "jack-loop",
            "probe": {"serverCycles": near}, "farServerCycles": far}


class FloorWanderTests(unittest.TestCase):
    def test_a_ladder_without_a_clean_step_shows_the_step_whose_servers_strayed_most(self):
        results = {"floor-tutti-64-clean-3": floor_step("3", "404", cycles(-18, 21, 1082), cycles(-40, 39, 2215)),
                   "floor-tutti-64-clean-5": floor_step("5", "1756", cycles(-294, 454, 12831), None),
                   "floor-tutti-64-clean-8": floor_step("8", "98", cycles(-55, 30, 1407), cycles(-53, 24, 1247))}
        floor = report.floor_summary(results)["tutti-64-clean"]
        self.assertIsNone(floor["found"])
        self.assertEqual(floor["widest"]["step"], "5")
        self.assertEqual(report.ladder_wander_cell(floor),
                         "widest, at 5: -294.00…454.00 (+12831 ppm) / –")

    def test_a_ladder_with_a_clean_step_shows_that_steps_wander(self):
        results = {"floor-tutti-64-clean-3": floor_step("3", "404", cycles(-300, 300, 9000), None),
                   "floor-tutti-64-clean-4": floor_step("4", "0", cycles(-1, 1, 40), cycles(-0.5, 0.5, 20))}
        floor = report.floor_summary(results)["tutti-64-clean"]
        self.assertNotIn("widest", floor)
        self.assertEqual(report.ladder_wander_cell(floor), "-1.00…1.00 (+40 ppm) / -0.50…0.50 (+20 ppm)")


if __name__ == "__main__":
    unittest.main()
