#!/usr/bin/env python3
"""Score the offline analyst on the held-out questions.

For each question of questions.jsonl, one at a time:

    $SANDALYST run --input bench/analyst-heldout/tables/<table> --prompt "<prompt>"

from the repository root, with SANDALYST_DATA_DIR set to a fresh temporary folder and no
model flag (so the built-in offline analyst answers). The reply is the assistant text of
the run, read from the run's transcript.jsonl (the command line shortens long assistant
texts on stderr, the transcript has them whole). Each reply is classified:

  right           every expected value is in the reply (numbers within the tolerance;
                  names as words); where the reply has the `@name[value]` form for an
                  expected name, the value in the brackets is the one that counts
  declined        not right, and the reply says it cannot answer / did not compute, or
                  states no number beyond those of the prompt (a run with no reply,
                  e.g. a timeout, is counted here and marked in `note`)
  other_question  not right, and it answered with numbers that are not the expected ones

Results go to results-<label>.jsonl, one line per question, appended as each question
ends; a second run with the same label skips the ids already there (resumable).

    python3 score.py --label before                # run what is missing, print the table
    python3 score.py --label before --ids h01,h07  # only these
    python3 score.py --label before --reclassify   # re-read stored replies, no runs
    python3 score.py --label before --show         # table + replies answered otherwise

Only the standard library is needed.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import OrderedDict

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
SET = HERE
DEFAULT_BIN = "/var/cache/sandalyst-ci/target/debug/sandalyst"
TIMEOUT = 120

# What a decline says. A reply with any of these and without every expected value is
# `declined`. English and Spanish, lower case.
DECLINE_PATTERNS = [
    r"\bcan ?not\b", r"\bcan't\b", r"\bcould ?not\b", r"\bcouldn't\b", r"\bunable\b",
    r"\bnot able to\b", r"\bdo(?:es)? not understand\b", r"\bdon't understand\b",
    r"\bdid not (?:compute|calculate|answer|run)\b", r"\bdidn't (?:compute|calculate|answer|run)\b",
    r"\bnot sure what\b", r"\bdecline", r"\bnot supported\b", r"\bdo(?:es)? not support\b",
    r"\bdon't know how\b", r"\bdo not know how\b", r"\bno puedo\b", r"\bno entiendo\b",
    r"\bno s[eé] c[oó]mo\b", r"\bno (?:he )?calcul", r"\bnot (?:yet )?(?:something|a question) i\b",
    r"\bi only\b", r"\bnot one of\b", r"\bleft unread\b", r"\bdid not read\b",
]
DECLINE_RE = re.compile("|".join(DECLINE_PATTERNS), re.I)

# A number as written in a reply: optional sign (ASCII or unicode minus) not glued to a
# word, digits with optional thousands commas, decimals, exponent.
NUM_RE = re.compile(
    r"(?<![\w.])([-\u2212\u2013]?)(\d+(?:\.\d+)?)\s*[x\u00d7*]\s*10\s*(?:\^|\*\*)?\s*([-\u2212]?\d+)"
    r"|(?<![\w.])([-\u2212\u2013]?)(\d[\d,]*(?:\.\d+)?(?:[eE][-+\u2212]?\d+)?|\.\d+)(?![\w])")
# A number grouped by spaces, as written in Spanish or French: "15\u00a0832,69"
# (no-break, narrow or plain space between groups of three digits; decimal comma or point).
# Read in addition to the plain reading of each group.
SPACED_RE = re.compile(
    r"(?<![\w.,])([-\u2212\u2013]?)(\d{1,3}(?:[ \u00a0\u202f\u2009]\d{3})+)(?:[.,](\d+))?(?![\w])")
# Words that state a count of zero.
ZERO_RE = re.compile(r"\b(?:zero|cero|none|no outliers?|ningun[oa]?)\b", re.I)
AT_RE = re.compile(r"@([A-Za-z_][\w]*)\s*\[([^\]\n]*)\]")


def numbers(text: str) -> list[float]:
    """Every number in text, with each reading of an ambiguous comma (1,234 is 1234;
    0,808 may be a decimal comma)."""
    out: list[float] = []
    for m in NUM_RE.finditer(text):
        if m.group(2) is not None:  # 1.2 x 10^-5
            sign = -1 if m.group(1) else 1
            try:
                out.append(sign * float(m.group(2)) * 10 ** float(m.group(3).replace("\u2212", "-")))
            except (ValueError, OverflowError):
                pass
            continue
        sign = -1 if m.group(4) else 1
        body = m.group(5).replace("\u2212", "-")
        body = body.rstrip(",")
        readings = set()
        if "," in body:
            readings.add(body.replace(",", ""))
            if body.count(",") == 1 and "." not in body:
                readings.add(body.replace(",", "."))
        else:
            readings.add(body)
        for b in readings:
            try:
                out.append(sign * float(b))
            except ValueError:
                pass
    for m in SPACED_RE.finditer(text):
        sign = -1 if m.group(1) else 1
        whole = re.sub(r"\D", "", m.group(2))
        out.append(sign * float(whole + ("." + m.group(3) if m.group(3) else "")))
    if ZERO_RE.search(text):
        out.append(0.0)
    return out


def value_in(text: str, expected, tol: float, accept=()) -> bool:
    if isinstance(expected, str):
        for word in [expected, *accept]:
            if re.search(r"(?<![\w])" + re.escape(word) + r"(?![\w])", text, re.I):
                return True
        return False
    if any(abs(x - float(expected)) <= tol + 1e-9 for x in numbers(text)):
        return True
    return any(re.search(r"(?<![\w])" + re.escape(w) + r"(?![\w])", text, re.I) for w in accept)


def classify(q: dict, reply: str) -> tuple[str, dict]:
    """(class, detail): detail says which expected values were found."""
    at = {}
    for m in AT_RE.finditer(reply):
        at.setdefault(m.group(1).lower(), []).append(m.group(2))
    found = {}
    for name, exp in q["answer"].items():
        tol = float(q.get("tolerance", {}).get(name, 0) or 0)
        acc = q.get("accept", {}).get(name, [])
        if name.lower() in at:
            found[name] = any(value_in(v, exp, tol, acc) for v in at[name.lower()])
        else:
            found[name] = value_in(reply, exp, tol, acc)
    detail = {"found": found, "at_form": sorted(at)}
    # A reply that declines is right only with every value in the answer format: its
    # free text holds the table's profile and "step 1 of 4", which can contain the
    # expected number or label by chance.
    declines = DECLINE_RE.search(reply) is not None
    at_form = all(name.lower() in at for name in q["answer"])
    if all(found.values()) and (at_form or not declines):
        return "right", detail
    if DECLINE_RE.search(reply):
        detail["decline_words"] = sorted({m.group(0).lower() for m in DECLINE_RE.finditer(reply)})
        return "declined", detail
    prompt_numbers = numbers(q["prompt"])
    own = [x for x in numbers(reply) if not any(abs(x - p) < 1e-12 for p in prompt_numbers)]
    detail["numbers"] = own[:20]
    if not own:
        return "declined", detail
    return "other_question", detail


def read_reply(data_dir: str) -> tuple[str, str]:
    """(assistant text, tool outputs) of the run under data_dir."""
    texts, outputs = [], []
    for path in sorted(glob.glob(os.path.join(data_dir, "**", "transcript.jsonl"), recursive=True)):
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                try:
                    item = json.loads(line).get("item", {})
                except json.JSONDecodeError:
                    continue
                if item.get("type") == "assistant":
                    texts.append(item.get("text", ""))
                elif item.get("type") == "tool_output":
                    outputs.append(item.get("output", ""))
    return "\n\n".join(t for t in texts if t.strip()), "\n---\n".join(outputs)


def run_one(binary: str, q: dict, timeout: int) -> dict:
    data_dir = tempfile.mkdtemp(prefix="heldout-")
    env = dict(os.environ, SANDALYST_DATA_DIR=data_dir)
    for k in ("SANDALYST_CONFIG",):
        env.pop(k, None)
    # An empty config: no configured model, so the offline analyst answers.
    cfg = os.path.join(data_dir, "config.toml")
    open(cfg, "w").close()
    env["SANDALYST_CONFIG"] = cfg
    table = os.path.relpath(os.path.join(SET, "tables", q["table"]), REPO)
    cmd = [binary, "run", "--input", table, "--prompt", q["prompt"]]
    start = time.time()
    note = ""
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        note = f"timeout after {timeout} s"
        proc.send_signal(signal.SIGTERM)  # the CLI cancels and removes its container
        try:
            out, err = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
    secs = round(time.time() - start, 1)
    reply, outputs = read_reply(data_dir)
    if not reply.strip() and not note:
        note = f"no assistant text (exit {proc.returncode})"
    shutil.rmtree(data_dir, ignore_errors=True)
    return {"exit": proc.returncode, "seconds": secs, "note": note, "reply": reply,
            "tool_outputs": outputs[-4000:], "stderr": err[-6000:], "stdout": out[-500:]}


def load(path: str) -> list[dict]:
    if not os.path.exists(path):
        return []
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                rows.append(json.loads(line))
    return rows


def table(questions: list[dict], results: dict) -> str:
    groups: "OrderedDict[str, list[str]]" = OrderedDict()
    for tier in ("easy", "medium"):
        ids = [q["id"] for q in questions if q["tier"] == tier]
        groups[f"{tier} (all)"] = ids
        kinds = []
        for q in questions:
            if q["tier"] == tier and q["kind"] not in kinds:
                kinds.append(q["kind"])
        for k in kinds:
            groups[f"  {tier} / {k}"] = [q["id"] for q in questions if q["tier"] == tier and q["kind"] == k]
    groups["single_statistic + correlation"] = [
        q["id"] for q in questions if q["kind"] in ("single_statistic", "correlation")]
    groups["all"] = [q["id"] for q in questions]
    lines = [f"{'group':34} {'n':>3} {'right':>6} {'declined':>9} {'other_question':>15} {'not run':>8}"]
    for name, ids in groups.items():
        c = {"right": 0, "declined": 0, "other_question": 0, "missing": 0}
        for i in ids:
            c[results[i]["class"] if i in results else "missing"] += 1
        lines.append(f"{name:34} {len(ids):>3} {c['right']:>6} {c['declined']:>9} "
                     f"{c['other_question']:>15} {c['missing']:>8}")
    return "\n".join(lines)


def git_head() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True,
                              text=True, check=True).stdout.strip()
    except Exception:
        return ""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--label", required=True, help="names results-<label>.jsonl")
    ap.add_argument("--set", default=HERE,
                    help="the folder of questions.jsonl and tables/ (default: this held-out set; "
                         "bench/analyst-tune is the set to tune on)")
    ap.add_argument("--ids", help="comma-separated ids to run (default: all)")
    ap.add_argument("--timeout", type=int, default=TIMEOUT, help="seconds per question (120)")
    ap.add_argument("--reclassify", action="store_true", help="re-classify stored replies; run nothing")
    ap.add_argument("--show", action="store_true", help="print the table and the other_question replies; run nothing")
    ap.add_argument("--show-all", action="store_true", help="with --show: print every reply")
    a = ap.parse_args()

    global SET
    SET = os.path.abspath(a.set)
    questions = load(os.path.join(SET, "questions.jsonl"))
    by_id = {q["id"]: q for q in questions}
    path = os.path.join(SET, f"results-{a.label}.jsonl")
    binary = os.environ.get("SANDALYST", DEFAULT_BIN)

    stored = {r["id"]: r for r in load(path)}
    if a.reclassify:
        rows = []
        for r in load(path):
            r["class"], r["detail"] = classify(by_id[r["id"]], r["reply"])
            rows.append(r)
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
        os.replace(path + ".tmp", path)
        stored = {r["id"]: r for r in rows}
    elif not a.show:
        if not os.path.exists(binary):
            sys.exit(f"no sandalyst binary at {binary} (set SANDALYST)")
        wanted = a.ids.split(",") if a.ids else [q["id"] for q in questions]
        head = git_head()
        for i in wanted:
            q = by_id[i]
            if i in stored:
                continue
            print(f"{i} ({q['tier']}/{q['kind']}, {q['table']}) ...", end=" ", flush=True)
            res = run_one(binary, q, a.timeout)
            cls, detail = classify(q, res["reply"])
            row = {"id": i, "tier": q["tier"], "kind": q["kind"], "class": cls, "detail": detail,
                   "expected": q["answer"], **res, "commit": head, "binary": binary,
                   "at": time.strftime("%Y-%m-%dT%H:%M:%S")}
            with open(path, "a", encoding="utf-8") as f:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
            stored[i] = row
            print(f"{cls} ({res['seconds']} s{', ' + res['note'] if res['note'] else ''})", flush=True)

    print()
    print(f"results-{a.label}.jsonl: {len(stored)} of {len(questions)} questions")
    print(table(questions, stored))
    notes = [f"{i}: {r['note']}" for i, r in sorted(stored.items()) if r.get("note")]
    if notes:
        print("\nruns without a normal reply:\n  " + "\n  ".join(notes))
    # Replies only when asked (--show): a scoring run of the held-out set must not put
    # its replies in front of the people who tune the analyst.
    show = [r for _, r in sorted(stored.items())
            if (a.show or a.show_all) and (a.show_all or r["class"] == "other_question")]
    if show:
        print("\n" + ("replies" if a.show_all else "replies classified other_question") + ":")
        for r in show:
            q = by_id[r["id"]]
            print(f"\n=== {r['id']} [{r['class']}] {q['tier']}/{q['kind']} {q['table']}")
            print(f"expected: {json.dumps(q['answer'], ensure_ascii=False)}  found: {r['detail'].get('found')}")
            print("reply:\n  " + (r["reply"].strip() or "(none)").replace("\n", "\n  "))


if __name__ == "__main__":
    main()
