"""The hybridization chapter's MLP, with only the import lines changed.

Run: ``python examples/chapter_mlp.py`` (writes my_mlp-symbol.json, MXNet's graph, and my_mlp-0000.params
in the current directory: the files MXNet 1.9.1 writes and loads).
"""

import time

from ast_hybrid import nd, sym  # was: from mxnet import nd, sym
from ast_hybrid.gluon import nn, SymbolBlock  # was: from mxnet.gluon import nn


def get_net():
    net = nn.HybridSequential()
    net.add(nn.Dense(256, activation='relu'),
            nn.Dense(128, activation='relu'),
            nn.Dense(2))
    net.initialize()
    return net


x = nd.random.normal(shape=(1, 512))
net = get_net()
before = net(x)
net.hybridize()
after = net(x)
print('same results before/after hybridize:', (abs(before - after)).max().asscalar() <= 1e-6)


def benchmark(net, x):
    start = time.time()
    for i in range(1000):
        _ = net(x)
    nd.waitall()  # to wait for all the asynchronous computations to finish
    return time.time() - start


net = get_net()
print('before hybridizing: %.4f sec' % (benchmark(net, x)))
net.hybridize()
print('after hybridizing: %.4f sec' % (benchmark(net, x)))

net.export('my_mlp')
print('exported: my_mlp-symbol.json, my_mlp-0000.params')

# reload the exported graph and run it without the model's Python code
deployed = SymbolBlock.imports('my_mlp-symbol.json', ['data'], 'my_mlp-0000.params')
print('reloaded program gives the same output:',
      float(abs(nd.array(deployed(x)) - net(x)).max().asscalar()) <= 1e-6)
print('a symbolic input, as in the chapter:', sym.var('data'))
