"""The start-up refusal inventory: what it finds, how ids stay put, what the check refuses."""

from __future__ import annotations

import textwrap
import unittest

import startup_checks as sc

SOURCE = textwrap.dedent(
    """
    class ParallelConfig:
        def __post_init__(self):
            if self.tp > 1:
                if self.dp > 1:
                    raise ValueError(f"tp {self.tp} with dp {self.dp}")
            else:
                raise ValueError("tp must exceed 1")
            try:
                import x
            except ImportError:
                raise RuntimeError("x missing")
            match self.mode:
                case "a":
                    raise ValueError("mode a")
            raise

    def helper():
        def inner():
            raise TypeError("inner")
    """
)


class Inventory(unittest.TestCase):
    def test_every_raise_with_its_conditions(self):
        got = [(r["function"], r["conditions"], r["message"]) for r in sc.raises(SOURCE)]
        self.assertEqual(
            got,
            [
                ("ParallelConfig.__post_init__", ["self.tp > 1", "self.dp > 1"], "f'tp {self.tp} with dp {self.dp}'"),
                ("ParallelConfig.__post_init__", ["not (self.tp > 1)"], "'tp must exceed 1'"),
                ("ParallelConfig.__post_init__", ["except ImportError"], "'x missing'"),
                ("ParallelConfig.__post_init__", ["case 'a'"], "'mode a'"),
                ("helper.inner", [], "'inner'"),
            ],
        )

    def test_an_assert_is_a_check_with_its_test_as_message(self):
        src = "class C:\n    def f(self):\n        if self.tp > 1:\n            assert self.sizes, 'no sizes'\n        assert self.x >= 1\n"
        got = [(r["function"], r["conditions"], r["message"]) for r in sc.raises(src)]
        self.assertEqual(
            got,
            [("C.f", ["self.tp > 1"], "assert self.sizes, 'no sizes'"), ("C.f", [], "assert self.x >= 1")],
        )

    def test_an_id_survives_moved_lines_not_a_changed_condition(self):
        a = sc.raises(SOURCE)[0]
        moved = sc.raises("\n\n\n" + SOURCE)[0]
        self.assertNotEqual(a["line"], moved["line"])
        self.assertEqual(sc.check_id("p.py", a), sc.check_id("p.py", moved))
        changed = sc.raises(SOURCE.replace("self.dp > 1", "self.dp > 2"))[0]
        self.assertNotEqual(sc.check_id("p.py", a), sc.check_id("p.py", changed))
        self.assertNotEqual(sc.check_id("p.py", a), sc.check_id("q.py", a))

    def test_the_check_refuses_gaps_stale_entries_and_unknown_rules(self):
        inv = {"a": {"package": "vllm", "path": "p.py", "function": "f", "line": 1, "releases": ["0.1"]}}
        self.assertEqual(sc.problems(inv, {"a": {"verdict": "unreachable", "why": "CUDA only"}}), [])
        self.assertIn("no verdict", sc.problems(inv, {})[0])
        bad = sc.problems(
            inv,
            {
                "a": {"verdict": "rule", "rule": "no_such_rule", "why": "x"},
                "b": {"verdict": "maybe", "why": ""},
            },
        )
        self.assertEqual(len(bad), 4, bad)
        self.assertTrue(any("no_such_rule" in b for b in bad))
        self.assertTrue(any("stale" in b for b in bad))
        self.assertTrue(any("'maybe'" in b for b in bad))
        self.assertTrue(any("no `why`" in b for b in bad))

    def test_the_readme_table_is_rewritten_between_its_markers_only(self):
        text = "head\n" + sc.BEGIN + "old\n" + sc.END + "tail\n"
        self.assertEqual(sc.readme_with(text, "new\n"), "head\n" + sc.BEGIN + "new\n" + sc.END + "tail\n")
        self.assertIsNone(sc.readme_with("no markers\n", "new\n"))
        inv = {"a": {}, "b": {}}
        table = sc.readme_table(inv, {"a": {"verdict": "open"}, "b": {"verdict": "rule"}})
        self.assertIn("| open | 1 |", table)
        self.assertIn("| rule | 1 |", table)
        self.assertIn("| all | 2 | |", table)

    def test_rule_names_are_read_from_the_rule_table(self):
        names = sc.rule_names()
        self.assertIn("tp_divides_node", names)
        self.assertIn("prefill_context_parallel_supported", names)
        self.assertGreaterEqual(len(names), 80)


if __name__ == "__main__":
    unittest.main()
