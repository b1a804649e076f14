"""``nose.tools``' helpers that MXNet 1.9.1's unit tests import, on unittest and pytest."""

import functools
import unittest

__all__ = ["assert_raises", "raises", "ok_", "eq_", "make_decorator", "with_setup", "nottest", "istest",
           "assert_equal", "assert_not_equal", "assert_true", "assert_false", "assert_almost_equal",
           "assert_in", "assert_is", "assert_is_none", "assert_greater", "assert_less", "SkipTest"]

_case = unittest.TestCase("__init__")
assert_raises = _case.assertRaises
assert_equal, assert_not_equal = _case.assertEqual, _case.assertNotEqual
assert_true, assert_false = _case.assertTrue, _case.assertFalse
assert_almost_equal, assert_in, assert_is = _case.assertAlmostEqual, _case.assertIn, _case.assertIs
assert_is_none, assert_greater, assert_less = _case.assertIsNone, _case.assertGreater, _case.assertLess
SkipTest = unittest.SkipTest


def ok_(expr, msg=None):
    if not expr:
        raise AssertionError(msg)


def eq_(a, b, msg=None):
    if not a == b:
        raise AssertionError(msg or f"{a!r} != {b!r}")


def make_decorator(func):
    """Wraps a test decorator so that the decorated test keeps its name and attributes."""
    def decorate(newfunc):
        name = func.__name__
        newfunc = functools.wraps(func)(newfunc)
        newfunc.__name__ = name
        return newfunc
    return decorate


def raises(*exceptions):
    def decorate(func):
        @functools.wraps(func)
        def test(*args, **kwargs):
            try:
                func(*args, **kwargs)
            except exceptions:
                return
            raise AssertionError(f"{func.__name__}() did not raise {' or '.join(e.__name__ for e in exceptions)}")
        return test
    return decorate


def with_setup(setup=None, teardown=None):
    def decorate(func):
        @functools.wraps(func)
        def test(*args, **kwargs):
            if setup:
                setup()
            try:
                return func(*args, **kwargs)
            finally:
                if teardown:
                    teardown()
        return test
    return decorate


def nottest(func):
    func.__test__ = False
    return func


def istest(func):
    func.__test__ = True
    return func
