import os
import subprocess

import pytest

from ast_hybrid.linter.config import (ConfigError, IgnoreMatcher, Settings, discover, find_pyproject,
                               load_settings)


@pytest.mark.parametrize("pattern,path,is_dir,expected", [
    ("*.py", "/r/a.py", False, True),
    ("*.py", "/r/deep/er/a.py", False, True),        # no slash: any level
    ("/a.py", "/r/sub/a.py", False, False),           # anchored
    ("/a.py", "/r/a.py", False, True),
    ("sub/a.py", "/r/x/sub/a.py", False, False),      # middle slash anchors
    ("build/", "/r/x/build", True, True),             # directory-only
    ("build/", "/r/x/build", False, False),
    ("**/gen", "/r/a/b/gen", False, True),
    ("**/gen", "/r/gen", False, True),
    ("docs/**", "/r/docs/a/b.py", False, True),
    ("a/**/b", "/r/a/b", False, True),
    ("a/**/b", "/r/a/x/y/b", False, True),
    ("a?.py", "/r/ab.py", False, True),
    ("a?.py", "/r/a/.py", False, False),
    ("[ab].py", "/r/b.py", False, True),
    ("[!ab].py", "/r/b.py", False, False),
    ("\\#x", "/r/#x", False, True),
    ("*.py", "/other/a.py", False, False),            # outside the base folder
])
def test_gitignore_patterns(pattern, path, is_dir, expected):
    assert IgnoreMatcher.from_lines([pattern], "/r").ignored(path, is_dir) is expected


def test_gitignore_negation_last_match_wins_and_comments():
    m = IgnoreMatcher.from_lines(["# comment", "", "*.py", "!keep.py", "keep.py  "], "/r")
    assert m.ignored("/r/keep.py", False)
    m = IgnoreMatcher.from_lines(["*.py", "!keep.py"], "/r")
    assert not m.ignored("/r/keep.py", False) and m.ignored("/r/other.py", False)


def _tree(root, files):
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def test_walk_respects_gitignore_nested_and_default_excludes(tmp_path):
    _tree(tmp_path, {
        ".gitignore": "ignored/\n*_gen.py\n",
        "a.py": "", "b_gen.py": "", "notes.txt": "", "stub.pyi": "",
        "ignored/x.py": "",
        "pkg/.gitignore": "!keep_gen.py\nlocal.py\n",
        "pkg/keep_gen.py": "", "pkg/local.py": "", "pkg/m.py": "",
        "other/local.py": "",
        ".venv-x/lib.py": "", "__pycache__/c.py": "", "build/d.py": "", "node_modules/e.py": "",
        ".git/hooks/h.py": "",
    })
    files, missing = discover([tmp_path], Settings(root=tmp_path))
    rel = sorted(os.path.relpath(f, tmp_path) for f in files)
    assert rel == ["a.py", "other/local.py", "pkg/keep_gen.py", "pkg/m.py"]
    assert missing == []


def test_exclude_patterns_and_explicit_files_always_linted(tmp_path):
    _tree(tmp_path, {"tests/data/bad.py": "", "tests/t.py": "", "src/m.py": ""})
    s = Settings(root=tmp_path).with_overrides(exclude=("tests/data",), extend_exclude=("src",))
    files, _ = discover([tmp_path], s)
    assert [os.path.relpath(f, tmp_path) for f in files] == ["tests/t.py"]
    explicit = tmp_path / "tests/data/bad.py"
    files, missing = discover([explicit, tmp_path / "nope.py"], s)
    assert files == [str(explicit)] and missing == [str(tmp_path / "nope.py")]


def test_gitignore_of_repo_ancestors_applies(tmp_path):
    _tree(tmp_path, {".gitignore": "gen/\n", "sub/gen/x.py": "", "sub/y.py": ""})
    (tmp_path / ".git").mkdir()
    files, _ = discover([tmp_path / "sub"], Settings(root=tmp_path))
    assert [os.path.basename(f) for f in files] == ["y.py"]


def test_gitignore_agrees_with_git(tmp_path):
    """The walk against git itself on a small tree with nested .gitignore files."""
    git = subprocess.run(["git", "--version"], capture_output=True)
    assert git.returncode == 0, "git is needed for this cross-check"
    _tree(tmp_path, {
        ".gitignore": "*.py\n!/keep*.py\nsub/**/deep.py\n/anch/\ndir/\n",
        "a.py": "", "keep1.py": "", "x/keep2.py": "", "sub/p/q/deep.py": "", "sub/ok.txt": "",
        "anch/z.txt": "", "w/anch/z.txt": "", "dir/f.txt": "", "n/dir/f.txt": "",
        "sub/.gitignore": "!deep.py\n", "sub/deep.py": "",
    })
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    paths = [str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")
             if p.is_file() and ".git" not in p.parts]
    done = subprocess.run(["git", "-C", str(tmp_path), "check-ignore", "--no-index", *paths],
                          capture_output=True, text=True)
    git_ignored = set(done.stdout.split())
    files, _ = discover([tmp_path], Settings(root=tmp_path).with_overrides(exclude=()))
    ours = {os.path.relpath(f, tmp_path) for f in files}
    for p in paths:
        if p.endswith(".py"):
            assert (p in ours) is (p not in git_ignored), p


def test_load_settings_and_selection(tmp_path):
    pp = tmp_path / "pyproject.toml"
    pp.write_text('[tool.ast-hybrid]\ntarget = "mxnet"\nselect = ["HY0"]\nignore = ["HY006"]\n'
                  'extend-select = ["HY1"]\nper-file-ignores = { "tests/*.py" = ["HY012"] }\n'
                  'output-format = "json"\n')
    (tmp_path / "pkg").mkdir()
    assert find_pyproject(tmp_path / "pkg") == pp.resolve()
    s = load_settings(pp)
    assert s.target == "mxnet" and s.output_format == "json" and s.root == tmp_path.resolve()
    assert s.is_selected("HY001") and not s.is_selected("HY006") and s.is_selected("HY010")
    assert not s.is_selected("HY012", str(tmp_path / "tests" / "t.py"))
    assert s.is_selected("HY012", str(tmp_path / "src" / "t.py"))
    # the most specific prefix wins; on a tie, ignore wins
    s2 = Settings(select=("HY001",), ignore=("HY0",))
    assert s2.is_selected("HY001") and not s2.is_selected("HY002")
    assert not Settings(select=("HY001",), ignore=("HY001",)).is_selected("HY001")
    assert Settings(ignore=("HY",)).is_selected("HY020")  # unreadable files are always reported


@pytest.mark.parametrize("body,needle", [
    ('target = "tf"', "target"), ('selec = ["HY"]', "unknown key"),
    ("select = 3", "list of strings"), ("[[[", "invalid TOML"),
    ('per-file-ignores = { "a" = "HY001" }', "per-file-ignores"),
])
def test_bad_config_is_a_clear_error(tmp_path, body, needle):
    pp = tmp_path / "pyproject.toml"
    pp.write_text("[tool.ast-hybrid]\n" + body + "\n")
    with pytest.raises(ConfigError, match=needle):
        load_settings(pp)


@pytest.mark.parametrize("seed", range(6))
def test_gitignore_random_patterns_agree_with_git(tmp_path, seed):
    """Random patterns (``*``, ``?``, ``**``, classes, anchors, ``/`` suffix, ``!``)
    over random trees: our matcher, applied down each path as the walk does,
    says what ``git check-ignore`` says."""
    import random

    rnd = random.Random(seed)
    atoms = ["a", "b", "*", "?", "**", "[ab]", "a*", "*.py", "x"]
    names = ["a", "b", "x", "ab", "a.py", "b.py"]
    for trial in range(5):
        root = tmp_path / f"r{trial}"
        root.mkdir()
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        pats = []
        for _ in range(rnd.randint(1, 4)):
            p = "/".join(rnd.choice(atoms) for _ in range(rnd.randint(1, 3)))
            p = ("/" if rnd.random() < 0.2 else "") + p + ("/" if rnd.random() < 0.2 else "")
            pats.append(("!" if rnd.random() < 0.2 else "") + p)
        (root / ".gitignore").write_text("\n".join(pats) + "\n")
        files = []
        wanted = {"/".join(rnd.choice(names) for _ in range(rnd.randint(1, 4))) for _ in range(12)}
        for rel in sorted(wanted, key=len, reverse=True):
            full = root / rel
            try:
                full.parent.mkdir(parents=True, exist_ok=True)
                if not full.exists():
                    full.touch()
                    files.append(rel)
            except (NotADirectoryError, FileExistsError):
                pass
        out = subprocess.run(["git", "-C", str(root), "check-ignore", "--no-index", *files],
                             capture_output=True, text=True).stdout.split()
        m = IgnoreMatcher.from_lines(pats, str(root))

        def ours(rel):
            parts = rel.split("/")
            return any(m.ignored(f"{root.as_posix()}/{'/'.join(parts[:i])}", i < len(parts))
                       for i in range(1, len(parts) + 1))
        for rel in files:
            assert ours(rel) is (rel in out), (pats, rel)
