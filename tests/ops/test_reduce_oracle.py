"""Reductions, norms, arg-reductions, sort and top-k against MXNet 1.9.1."""

import pytest
from ops_harness import check, inputs, mx_results

pytestmark = pytest.mark.oracle

ARR = inputs(3, x=((2, 3, 4), "float32"), h=((3, 5), "float16"), i=((3, 4), "int32"), v=((6,), "float32"),
             p=((2, 3), "float32", 0.5, 1.5))
ARR["n"] = ARR["x"].copy()
ARR["n"][0, 1, 2] = float("nan")

REDUCERS = ["sum", "mean", "max", "min", "prod", "nansum", "nanprod"]
AXES = ["", ", axis=1", ", axis=(0, 2)", ", axis=-1, keepdims=True", ", axis=1, exclude=True", ", axis=()",
        ", keepdims=True", ", axis=(1,), exclude=True, keepdims=True", ", axis=3"]

CASES = [f"nd.{r}(x{a})" for r in REDUCERS for a in AXES] + [f"nd.{r}(i{a})" for r in ("sum", "max", "min", "mean")
                                                             for a in ("", ", axis=0", ", axis=1, keepdims=True")] + [
    "nd.sum(h)", "nd.mean(h, axis=1)", "nd.max(h, axis=0)", "nd.nansum(n)", "nd.nansum(n, axis=2)",
    "nd.nanprod(n, axis=1)", "nd.sum_axis(x, axis=1)", "nd.max_axis(x, axis=2)", "nd.min_axis(x, axis=0)",
    "nd.mean(v)", "nd.prod(p)",
    "nd.norm(x)", "nd.norm(x, axis=1)", "nd.norm(x, ord=1, axis=2)", "nd.norm(x, axis=(1, 2))",
    "nd.norm(x, axis=-1, keepdims=True)", "nd.norm(h)", "nd.norm(x, ord=3)", "nd.norm(x, out_dtype='float16')",
    "nd.argmax(x)", "nd.argmax(x, axis=1)", "nd.argmax(x, axis=-1, keepdims=True)", "nd.argmin(x, axis=0)",
    "nd.argmax(i, axis=1)", "nd.argmin(h, axis=1)", "nd.argmax_channel(x)", "nd.argmax(v)",
    "nd.sort(x)", "nd.sort(x, axis=1, is_ascend=False)", "nd.sort(v, axis=None)", "nd.sort(i, axis=0)",
    "nd.argsort(x)", "nd.argsort(x, axis=0, is_ascend=False)", "nd.argsort(i, axis=1, dtype='int32')",
    "nd.argsort(v, axis=None)",
    "nd.topk(x)", "nd.topk(x, k=2)", "nd.topk(x, k=2, ret_typ='value')", "nd.topk(x, k=2, ret_typ='both')",
    "nd.topk(x, k=3, axis=1, ret_typ='mask')", "nd.topk(x, k=2, is_ascend=True, ret_typ='both')",
    "nd.topk(x, k=2, axis=None)", "nd.topk(x, k=0, axis=1, ret_typ='value')", "nd.topk(x, k=2, dtype='int32')",
    "nd.topk(i, k=2, ret_typ='both', axis=0)", "nd.topk(x, k=9)", "nd.topk(x, ret_typ='nope')",
    "nd.moments(x, axes=(0, 2))", "nd.moments(x, axes=(1,), keepdims=True)",
    "nd.cumsum(x, axis=1)", "nd.cumsum(v)", "nd.cumsum(i, axis=0)",
]
CASES = list(dict.fromkeys(CASES))


@pytest.fixture(scope="module")
def ref(oracle):
    return mx_results(oracle, [(c, c) for c in CASES], ARR)


@pytest.mark.parametrize("code", CASES)
def test_matches_mxnet(ref, code):
    check(ref[code], code, ARR, tol=(2e-2, 5e-2) if "(h" in code else None)
