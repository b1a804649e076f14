"""The Gluon training loop of MXNet's MNIST tutorial on synthetic data: an MXNet script, unchanged.

Run it with ast-hybrid as ``ast-hybrid run examples/train_mnist_style.py`` (``import mxnet`` is then
ast-hybrid), or with a real MXNet 1.9.1 as ``python examples/train_mnist_style.py``: both print the same
losses and accuracies (``tests/mxnet/test_examples.py`` checks it).  ``DataLoader`` over an in-memory
``ArrayDataset`` with ``vision.transforms``, a small ``HybridSequential``, ``Trainer``,
``SoftmaxCrossEntropyLoss`` and ``mx.metric.Accuracy`` per epoch.
"""

import argparse
import time

import numpy as np

import mxnet as mx
from mxnet import autograd, gluon, nd
from mxnet.gluon import nn
from mxnet.gluon.data.vision import transforms

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=5)
parser.add_argument("--batch-size", type=int, default=32)
args = parser.parse_args()

# 10 classes of 12x12 one-channel "digits": a class template plus noise, as uint8 images (H, W, C)
rng = np.random.RandomState(0)
templates = rng.uniform(0, 255, (10, 12, 12, 1))
labels = rng.randint(0, 10, 600)
images = np.clip(templates[labels] + rng.normal(0, 60, (600, 12, 12, 1)), 0, 255).astype("uint8")
train = gluon.data.ArrayDataset(nd.array(images[:500], dtype="uint8"), labels[:500].astype("float32"))
test = gluon.data.ArrayDataset(nd.array(images[500:], dtype="uint8"), labels[500:].astype("float32"))

transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize(0.5, 0.25)])
np.random.seed(1)                                   # the DataLoader's shuffle draws numpy's generator
train_data = gluon.data.DataLoader(train.transform_first(transform), batch_size=args.batch_size, shuffle=True)
test_data = gluon.data.DataLoader(test.transform_first(transform), batch_size=50)

net = nn.HybridSequential()
net.add(nn.Conv2D(8, kernel_size=3, activation="relu"), nn.MaxPool2D(2), nn.Flatten(),
        nn.Dense(32, activation="relu"), nn.Dense(10))
net.initialize()
net(nd.zeros((1, 1, 12, 12)))
for name, p in sorted(net.collect_params().items()):     # the same start in MXNet and in ast-hybrid
    p.set_data(nd.array(rng.normal(0, 0.1, p.shape)))
net.hybridize()

loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.05})
train_acc, test_acc = mx.metric.Accuracy(), mx.metric.Accuracy()
start = time.time()
for epoch in range(args.epochs):
    train_acc.reset()
    total = 0.0
    for data, label in train_data:
        with autograd.record():
            output = net(data)
            loss = loss_fn(output, label)
        loss.backward()
        trainer.step(data.shape[0])
        train_acc.update([label], [output])
        total += loss.sum().asscalar()
    test_acc.reset()
    for data, label in test_data:
        test_acc.update(label, net(data))
    print("epoch %d loss %.6f train %s %.4f test %s %.4f" % (
        epoch, total / len(train), *train_acc.get(), *test_acc.get()))
print("time %.1f s" % (time.time() - start))
