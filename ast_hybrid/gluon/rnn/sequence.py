"""What the recurrent cells' ``unroll`` does to a sequence, as MXNet 1.9.1's ``gluon/rnn/rnn_cell.py`` helpers:
its steps as a list or one array (``_format_sequence``), the begin states (``_get_begin_state``), masking
and reversing by valid length.  Given NDArrays ``F`` is ``nd``; given Symbols it records graph nodes and the
batch size is unknown (0), resolved by the graph's shape inference (``symbol/unknown_dims.py``).
"""

from __future__ import annotations

from ast_hybrid.core.ndarray import NDArray
from ast_hybrid.gluon.block import wrap_inputs
from ast_hybrid.symbol.graph import Symbol


def _nd():
    from ast_hybrid import nd

    return nd


def _symbol_f():
    from ast_hybrid.symbol.recorder import _traced_f

    return _traced_f()


def _is_tensor(x):
    """MXNet's ``tensor_types``: an NDArray or a Symbol."""
    return isinstance(x, (NDArray, Symbol))


def _get_begin_state(cell, F, begin_state, batch_size):
    """``cell.begin_state`` made by ``F.zeros`` where none is given: for Symbols a zeros node of batch 0,
    which the graph's shape inference resolves (``symbol.graph``), as in MXNet."""
    if begin_state is None:
        begin_state = cell.begin_state(func=F.zeros, batch_size=batch_size)
    return begin_state


def _format_sequence(length, inputs, layout, merge, in_layout=None):
    """MXNet's ``_format_sequence``: ``inputs`` (one array with a time axis, or a list of steps) as a list
    of steps (``merge=False``), one array (``merge=True``) or as given (``None``); returns
    ``(inputs, time_axis, F, batch_size)``: for Symbols ``F`` records graph nodes and the batch size is
    unknown (0)."""
    assert inputs is not None, "unroll(inputs=None) has been deprecated. Please create input variables " \
                               "outside unroll."
    axis, batch_axis = layout.find("T"), layout.find("N")
    in_axis = in_layout.find("T") if in_layout is not None else axis
    batch_size = 0
    if isinstance(inputs, Symbol):
        F = _symbol_f()
        if merge is False:
            assert len(inputs.list_outputs()) == 1, \
                "unroll doesn't allow grouped symbol as input. Please convert to list with list(inputs) first " \
                "or let unroll handle splitting."
            inputs = _as_list(F.split(inputs, axis=in_axis, num_outputs=length, squeeze_axis=1))
    elif not isinstance(inputs, (list, tuple)):
        F = _nd()
        inputs = wrap_inputs([inputs])[0]
        batch_size = inputs.shape[batch_axis]
        if merge is False:
            assert length is None or length == inputs.shape[in_axis]
            inputs = _as_list(F.split(inputs, axis=in_axis, num_outputs=inputs.shape[in_axis], squeeze_axis=1))
    else:
        assert length is None or len(inputs) == length
        if isinstance(inputs[0], Symbol):
            F = _symbol_f()
        else:
            F = _nd()
            inputs = wrap_inputs(inputs)
            batch_size = inputs[0].shape[0]
        if merge is True:
            inputs = F.stack(*inputs, axis=axis)
            in_axis = axis
    if _is_tensor(inputs) and axis != in_axis:
        inputs = F.swapaxes(inputs, dim1=axis, dim2=in_axis)
    return inputs, axis, F, batch_size


def _as_list(x):
    """The steps a split gives: a list of NDArrays, or one Symbol of several outputs (each a step)."""
    return list(x) if isinstance(x, (list, tuple, Symbol)) else [x]


def _mask_sequence_variable_length(F, data, length, valid_length, time_axis, merge):
    """Zero the steps past each sequence's ``valid_length``."""
    assert valid_length is not None
    if not _is_tensor(data):
        data = F.stack(*data, axis=time_axis)
    outputs = F.SequenceMask(data, sequence_length=valid_length, use_sequence_length=True, axis=time_axis)
    if not merge:
        outputs = F.split(outputs, num_outputs=length, axis=time_axis, squeeze_axis=True)
        outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    return outputs


def _reverse_sequences(F, sequences, unroll_step, valid_length=None):
    """The steps in reverse order; with ``valid_length`` each sequence's valid steps are reversed in place."""
    if valid_length is None:
        return list(reversed(sequences))
    rev = F.SequenceReverse(F.stack(*sequences, axis=0), sequence_length=valid_length, use_sequence_length=True)
    if unroll_step > 1:
        return list(F.split(rev, axis=0, num_outputs=unroll_step, squeeze_axis=True))
    return [rev[0]]
