package graph

// Build validates a case assembled in code (by another reader of a case
// format, such as a test file): names, topology, sources, params (rawParams[i]
// are node i's parameters as a case file would give them; they are
// normalized in place through the op catalog) and result shapes. Errors
// are *Error with c.File and the line of the tensor or node.
func Build(c *Case, rawParams []map[string]any) error {
	return validate(c, rawParams, nil)
}
