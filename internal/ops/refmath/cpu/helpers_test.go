package cpu

// host is this CPU's kernel set, for the kernels' tests.
var host = func() *Kernels { ks := Detect(); return &ks }()
