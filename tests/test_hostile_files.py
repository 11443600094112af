"""Hostile LibSVM-format files: every load either gives the documented content or raises the
package's own ``MalformedFileError`` naming the file (and the line where it can be found).

Property-based: hypothesis writes well-formed files in every layout the parser documents
(blank lines, comments, CRLF, a byte order mark, tabs, compression) and checks the parsed content
against what it wrote; then it damages one line with a hostile token and checks the error; then
it feeds arbitrary bytes and checks that nothing but an ``AlphaseedError`` escapes.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import re
import uuid

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from alphaseed.pipeline.data import load_dataset, parse_libsvm
from alphaseed.errors import AlphaseedError, MalformedFileError

# Small files and few examples: the whole module runs in a few seconds.
HOSTILE = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
COMPRESSORS = {"": lambda b: b, ".xz": lzma.compress, ".bz2": bz2.compress, ".gz": gzip.compress}

finite = st.floats(allow_nan=False, allow_infinity=False, width=64, min_value=-1e300, max_value=1e300)
labels = st.sampled_from([1.0, -1.0, 2.0, 0.0, 3.5])
features = st.dictionaries(st.integers(1, 40), finite, max_size=6)
instances = st.lists(st.tuples(labels, features), min_size=1, max_size=8)


def write(folder, text: bytes, suffix: str = "") -> object:
    path = folder / f"hostile-{uuid.uuid4().hex[:8]}.txt{suffix}"
    path.write_bytes(COMPRESSORS[suffix](text))
    return path


def render(instance, layout) -> str:
    label, values = instance
    separator = "\t" if layout.get("tabs") else " "
    tokens = [repr(label)] + [f"{index}:{values[index]!r}" for index in sorted(values)]
    line = separator.join(tokens)
    if layout.get("comment"):
        line += " # a trailing comment"
    return line


@st.composite
def well_formed_files(draw):
    rows = draw(instances)
    layout = draw(st.fixed_dictionaries({
        "tabs": st.booleans(), "comment": st.booleans(), "crlf": st.booleans(),
        "bom": st.booleans(), "blank_lines": st.booleans(), "final_newline": st.booleans(),
        "suffix": st.sampled_from(sorted(COMPRESSORS)),
    }))
    lines = []
    for row in rows:
        if layout["blank_lines"]:
            lines += ["", "# a comment line", "   "]
        lines.append(render(row, layout))
    newline = "\r\n" if layout["crlf"] else "\n"
    text = newline.join(lines) + (newline if layout["final_newline"] else "")
    data = ("\ufeff" if layout["bom"] else "") + text
    return rows, data.encode("utf-8"), layout["suffix"]


@HOSTILE
@given(well_formed_files())
def test_well_formed_files_parse_to_what_was_written(tmp_path, case):
    rows, text, suffix = case
    path = write(tmp_path, text, suffix)
    X, raw_labels = parse_libsvm(path)
    dim = max([max(values, default=1) for _, values in rows] + [1])
    assert X.shape == (len(rows), dim)
    np.testing.assert_array_equal(raw_labels, [label for label, _ in rows])
    dense = X.toarray()
    for row, (_, values) in enumerate(rows):
        expected = np.zeros(dim)
        for index, value in values.items():
            expected[index - 1] = value
        np.testing.assert_array_equal(dense[row], expected)


# One hostile token (and why it is refused), placed in one line of a good file.
HOSTILE_TOKENS = [
    ("0:1", "Invalid index 0"),
    ("-3:1", "Invalid index -3"),
    ("99999999999:1", "too large"),
    ("2147483648:1", "too large"),
    ("1.5:2", "invalid literal"),
    ("x:1", "invalid literal"),
    ("1:abc", "convert"),
    ("1:", "convert"),
    ("1:2:3", "convert"),
    (":", "invalid literal"),
    ("7", "not LibSVM format"),
    ("1:nan", "NaN or infinite"),
    ("1:inf", "NaN or infinite"),
    ("1:-inf", "NaN or infinite"),
    ("1:1e400", "NaN or infinite"),
    ("\x00", "not LibSVM format"),
]


@HOSTILE
@given(
    rows=st.lists(st.tuples(labels, st.dictionaries(st.integers(50, 60), finite, max_size=3)),
                  min_size=1, max_size=6),
    where=st.integers(0, 5),
    token=st.sampled_from(HOSTILE_TOKENS),
    crlf=st.booleans(),
    suffix=st.sampled_from(sorted(COMPRESSORS)),
)
def test_a_hostile_token_fails_naming_the_file_and_line(tmp_path, rows, where, token, crlf, suffix):
    bad, reason = token
    lines = [render(row, {}) for row in rows]
    where = min(where, len(lines) - 1)
    # Indices 50..60 follow the token, so "sorted and unique" is not what trips the parser.
    label, values = rows[where]
    lines[where] = " ".join([repr(label), bad] + [f"{i}:{values[i]!r}" for i in sorted(values)])
    path = write(tmp_path, ("\r\n" if crlf else "\n").join(lines).encode() + b"\n", suffix)
    with pytest.raises(MalformedFileError) as error:
        parse_libsvm(path)
    message = str(error.value)
    assert f"{path}, line {where + 1}:" in message
    assert reason in message


@pytest.mark.parametrize(
    "text, line",
    [
        (b"1 2:1 2:3\n", 1),             # duplicate index
        (b"1 1:1\n-1 3:1 2:3\n", 2),     # unsorted indices
        (b"1 1:1\nnan 2:1\n", 2),        # label not a number
        (b"1 1:1\ninf 2:1\n", 2),
        (b"1 1:1\n\xef\xbb\xbf-1 2:1\n", 2),   # a byte order mark that is not at the start
        (b"1 1:\xe9\n", 1),              # not ASCII
    ],
)
def test_indices_and_labels_the_parser_must_refuse(tmp_path, text, line):
    path = write(tmp_path, text)
    with pytest.raises(MalformedFileError, match=re.escape(f"{path}, line {line}:")):
        parse_libsvm(path)


@pytest.mark.parametrize("text", [b"", b"\n\r\n \t\n", b"# comment\r\n", b"\xef\xbb\xbf"])
def test_files_without_instances_fail_naming_the_file(tmp_path, text):
    path = write(tmp_path, text)
    with pytest.raises(MalformedFileError, match=re.escape(f"{path}: the file holds no instances")):
        parse_libsvm(path)


def test_one_class_only_parses_and_keeps_its_labels(tmp_path):
    # A file may hold one class; whether that can be trained on is the solver's question.
    X, y = load_dataset(write(tmp_path, b"1 1:1\n1 2:1\n1 3:1\n"))
    assert X.shape == (3, 3) and y.tolist() == [1.0, 1.0, 1.0]


def test_label_only_lines_are_all_zero_instances(tmp_path):
    X, y = parse_libsvm(write(tmp_path, b"1\n-1 3:2\n-1\n"))
    assert X.shape == (3, 3) and X.nnz == 1 and y.tolist() == [1, -1, -1]


def test_a_gigantic_line_parses(tmp_path):
    many = 100_000
    text = b"1 " + b" ".join(b"%d:0.5" % i for i in range(1, many + 1)) + b"\n-1 1:1\n"
    X, y = parse_libsvm(write(tmp_path, text, ".xz"))
    assert X.shape == (2, many) and X.nnz == many + 1 and y.tolist() == [1, -1]


def test_a_gigantic_line_of_garbage_fails_naming_the_line(tmp_path):
    text = b"1 1:1\n-1 " + b"z" * 2_000_000 + b"\n"
    path = write(tmp_path, text)
    with pytest.raises(MalformedFileError, match=re.escape(f"{path}, line 2:")):
        parse_libsvm(path)


@HOSTILE
@given(text=st.binary(max_size=300), suffix=st.sampled_from(["", ".xz", ".gz", ".bz2"]),
       compress=st.booleans())
def test_arbitrary_bytes_never_escape_as_a_foreign_exception(tmp_path, text, suffix, compress):
    # Compressed or not (a file named .xz that holds plain text is damage too).
    path = tmp_path / f"noise-{uuid.uuid4().hex[:8]}.txt{suffix}"
    path.write_bytes(COMPRESSORS[suffix](text) if compress else text)
    try:
        X, y = load_dataset(path, labels={"positive": [1], "negative": [-1]})
    except AlphaseedError as error:
        assert str(path) in str(error)
    else:
        assert X.shape[0] == len(y) >= 1 and np.all(np.isfinite(X.data))


@HOSTILE
@given(lines=st.lists(
    st.lists(st.sampled_from(["1", "-1", "+1", "1:1", "2:0.5", "3:-2", "#", "qid:1", "0:1",
                              "1e3:1", "2:1e-400", "\t", "\r", ":", "1::1", "-0:1", "4:+7"]),
             max_size=6).map(" ".join),
    max_size=6))
def test_token_soup_never_escapes_as_a_foreign_exception(tmp_path, lines):
    path = write(tmp_path, "\n".join(lines).encode())
    try:
        X, raw = parse_libsvm(path)
    except MalformedFileError as error:
        assert str(path) in str(error)
    else:
        assert X.shape[0] == len(raw) >= 1
        assert np.all(np.isfinite(X.data)) and np.all(np.isfinite(raw))
