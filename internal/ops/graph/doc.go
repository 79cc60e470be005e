// Package graph owns et's case files (testcases/*.yaml, DESIGN.md §4): the
// strict YAML loader with file:line errors, the init expressions that make
// leaf tensors deterministic given a seed, .npy reading and writing, and
// the two other ways to describe a case — a test-backend-ops case string
// (MUL_MAT(type_a=q8_0,...)) and the flags of et run-op.
//
// graph imports only internal/ops, the standard library and
// go.yaml.in/yaml/v3. It never prints and never exits; errors about bad
// input implement InputError() so that the command maps them to exit 2.
package graph
