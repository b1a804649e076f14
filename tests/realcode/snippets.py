"""Code shared by the real-code tests' MXNet-side scripts (run in the oracle and, unchanged, on ours)."""

# MXNet-side code (run in the oracle) that gives a built `net` BatchNorm statistics and affine parameters
# away from their initial values, so that a wrong use of any of them shows
RANDOMISE_BATCHNORM = """
rs = np.random.RandomState(0)
for pname, p in net.collect_params().items():
    if pname.endswith('running_mean'): p.set_data(nd.array(rs.uniform(-0.2, 0.2, p.shape)))
    if pname.endswith('running_var'): p.set_data(nd.array(rs.uniform(0.5, 1.5, p.shape)))
    if pname.endswith('gamma'): p.set_data(nd.array(rs.uniform(0.5, 1.5, p.shape)))
    if pname.endswith('beta'): p.set_data(nd.array(rs.uniform(-0.2, 0.2, p.shape)))
"""
