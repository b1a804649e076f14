"""``mxnet.runtime``: which features this build has (``Features``, ``feature_list``), as MXNet 1.9.1 reports
its own build's, answered for ast-hybrid on this machine: a GPU when jax has one, no MKLDNN/oneDNN, CUDA
libraries, int64 tensor sizes or TVM operators."""

from __future__ import annotations

import collections

from ast_hybrid.core.context import num_gpus
from ast_hybrid.mxnet._missing import module_getattr

__all__ = ["Feature", "Features", "feature_list"]

# MXNet 1.9.1's feature names, in its order
NAMES = ("CUDA", "CUDNN", "NCCL", "CUDA_RTC", "TENSORRT", "CPU_SSE", "CPU_SSE2", "CPU_SSE3", "CPU_SSE4_1",
         "CPU_SSE4_2", "CPU_SSE4A", "CPU_AVX", "CPU_AVX2", "OPENMP", "SSE", "F16C", "JEMALLOC", "BLAS_OPEN",
         "BLAS_ATLAS", "BLAS_MKL", "BLAS_APPLE", "LAPACK", "MKLDNN", "OPENCV", "CAFFE", "PROFILER", "DIST_KVSTORE",
         "CXX14", "INT64_TENSOR_SIZE", "SIGNAL_HANDLER", "DEBUG", "TVM_OP")


class Feature(collections.namedtuple("Feature", ["name", "enabled"])):
    """One feature and whether this build has it."""

    def __repr__(self):
        return ("✔ " if self.enabled else "✖ ") + self.name


def feature_list():
    gpu = num_gpus() > 0
    on = {"CUDA": gpu, "CPU_SSE": True, "CPU_SSE2": True, "CPU_SSE3": True, "LAPACK": True, "CXX14": True,
          "DIST_KVSTORE": True}
    return [Feature(name, on.get(name, False)) for name in NAMES]


class Features(collections.OrderedDict):
    """The features by name; ``is_enabled(name)``."""

    def __init__(self):
        super().__init__((f.name, f) for f in feature_list())

    def __repr__(self):
        return str(list(self.values()))

    def is_enabled(self, feature_name):
        feature_name = feature_name.upper()
        if feature_name not in self:
            raise RuntimeError(f"Feature '{feature_name}' is unknown, known features are: {list(self.keys())}")
        return self[feature_name].enabled


__getattr__ = module_getattr("mxnet.runtime", __name__)
