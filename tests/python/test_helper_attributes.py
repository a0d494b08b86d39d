"""`import trainwatch` alone gives the framework helpers as attributes, as docs/training.md
uses them, and importing the module loads no helper and no framework."""
import subprocess
import textwrap

from test_trainwatch import PY

HELPERS = ("colossalai", "deepspeed", "huggingface", "lightning")
FRAMEWORKS = ("torch", "deepspeed", "colossalai", "transformers", "lightning", "pytorch_lightning")


def run(env, code):
    p = subprocess.run([PY, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout.split()


def test_import_loads_no_helper_and_no_framework(env):
    loaded = run(env, f"""
        import sys, trainwatch
        print(*[m for m in {HELPERS!r} if "trainwatch." + m in sys.modules] or ["-"])
        print(*[m for m in {FRAMEWORKS!r} if m in sys.modules] or ["-"])
    """)
    assert loaded == ["-", "-"]


def test_each_helper_is_an_attribute_of_the_plain_import(env):
    names = run(env, f"""
        import trainwatch
        print(trainwatch.deepspeed.watch.__name__, trainwatch.colossalai.__name__,
              trainwatch.huggingface.__name__, trainwatch.lightning.__name__)
    """)
    assert names == ["watch"] + [f"trainwatch.{m}" for m in ("colossalai", "huggingface", "lightning")]


def test_an_unknown_attribute_still_raises(env):
    out = run(env, """
        import trainwatch
        try:
            trainwatch.tensorflow
        except AttributeError as e:
            print(e)
    """)
    assert " ".join(out) == "module 'trainwatch' has no attribute 'tensorflow'"
