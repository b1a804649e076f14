"""What gets linted: entries, helpers given F, super(), nested functions; tensors vs Python values."""

from lint_helpers import check, codes

HEAD = "from mxnet import gluon, nd\nfrom mxnet.gluon import HybridBlock, Block, nn\n"


def test_plain_block_forward_is_not_linted():
    src = HEAD + "class B(Block):\n    def forward(self, x):\n        x += 1\n        return x\n"
    assert codes(src) == []


def test_hybridblock_forward_mxnet2_style_is_linted():
    for base in ("HybridBlock", "gluon.HybridBlock", "nn.HybridBlock"):
        src = HEAD + f"class B({base}):\n    def forward(self, x):\n        x[0] = 1\n        return x\n"
        assert codes(src) == ["HY002"], base


def test_forward_of_transitive_subclass_in_same_file():
    src = (HEAD + "class A(nn.HybridBlock):\n    pass\n"
           "class C(A):\n    def forward(self, x):\n        self.n = self.n + x\n        return x\n")
    assert codes(src) == ["HY012"]


def test_forward_of_unknown_base_is_not_linted():
    src = HEAD + "class C(SomethingElse):\n    def forward(self, x):\n        self.n = 1\n        return x\n"
    assert codes(src) == []


def test_module_helper_given_f_is_linted_with_call_site_tensors():
    src = HEAD + """
def helper(F, a, scale):
    if scale > 1:        # scale is a Python value at the only call site
        a = a * scale
    a += 1               # a is a tensor
    return a

class N(HybridBlock):
    def hybrid_forward(self, F, x):
        return helper(F, x, self._scale)
"""
    found = check(src)
    assert [(d.code, d.span.line) for d in found] == [("HY001", 7)]


def test_helper_given_tensors_without_f_is_linted():
    # it runs inside the forward, on the forward's Symbols (issue 14: was a miss)
    src = HEAD + "def helper(a):\n    a += 1\n    return a\n" + \
        "class N(HybridBlock):\n    def hybrid_forward(self, F, x):\n        return helper(x)\n"
    assert codes(src) == ["HY001"]


def test_helper_given_neither_f_nor_tensors_is_not_linted():
    src = HEAD + "def helper(a):\n    a += 1\n    return a\n" + \
        "class N(HybridBlock):\n    def hybrid_forward(self, F, x):\n        return x * helper(2)\n"
    assert codes(src) == []


def test_method_helper_and_its_return_value():
    src = HEAD + """
class N(HybridBlock):
    def _act(self, F, x):
        return F.relu(x)

    def hybrid_forward(self, F, x):
        y = self._act(F, x)
        for r in y:
            pass
        return y
"""
    assert codes(src) == ["HY011"]


def test_super_hybrid_forward_in_same_file_is_linted():
    src = HEAD + """
class A(HybridBlock):
    def hybrid_forward(self, F, x):
        return x

class B(A):
    def hybrid_forward(self, F, x):
        y = super().hybrid_forward(F, x)
        return y
"""
    assert codes(src) == []
    src2 = src.replace("        return x\n", "        x.wait_to_read()\n        return x\n", 1)
    assert codes(src2) == ["HY005"]


def test_nested_function_params_bound_at_call_sites():
    src = HEAD + """
class N(HybridBlock):
    def hybrid_forward(self, F, x):
        def step(a, n):
            if n > 0:      # n is an int
                a = a * 2
            a += 1         # a is a tensor
            return a
        return step(x, 3)
"""
    assert [(d.code, d.span.line) for d in check(src)] == [("HY001", 9)]


def test_kwargs_are_parameters_and_args_a_tuple():
    src = HEAD + """
class N(HybridBlock):
    def hybrid_forward(self, F, x, *args, **kwargs):
        w = kwargs['weight']
        if w.sum() > 0:
            pass
        for a in args:
            x = x + a
        return x
"""
    assert codes(src) == ["HY010"]


def test_child_block_outputs_are_tensors():
    src = HEAD + """
class N(HybridBlock):
    def hybrid_forward(self, F, x):
        y = self.dense(x)
        y += 1
        outs = self.rnn(x)
        outs += [y]
        for layer in self.layers:
            x = layer(x)
        x.wait_to_read()
        return y
"""
    assert codes(src) == ["HY001", "HY005"]


def test_reassigned_name_is_a_tensor_if_any_definition_is():
    src = HEAD + """
class N(HybridBlock):
    def hybrid_forward(self, F, x, flag=None):
        v = 1.0
        if flag is None:
            v = F.ones_like(x)
        if v:
            pass
        return x
"""
    assert codes(src) == ["HY010"]


def test_getattr_f_and_aliased_ops():
    src = HEAD + """
class N(HybridBlock):
    def hybrid_forward(self, F, x):
        act = getattr(F, self._act)
        y = act(x)
        op = F.relu
        z = op(x)
        if y > z:
            pass
        return y
"""
    assert codes(src) == ["HY010"]


def test_weird_but_valid_syntax_in_forward():
    src = HEAD + """
class N(HybridBlock):
    @some.decorator
    def hybrid_forward(self, F, x, /, y=None, *, z=None):
        if (n := F.relu(x)) is not None:
            pass
        match self.mode:
            case "a":
                x = x * 2
            case _:
                pass
        f = lambda t: t + 1
        class Inner:
            def forward(self, q):
                q += 1
        async def co():
            await something()
        return f(x) + n
"""
    assert codes(src) == []
