package outfile

import (
	"errors"
)

func isWriteError(err error) bool {
	var we *WriteError
	return errors.As(err, &we)
}

func isPathError(err error) bool {
	var pe *PathError
	return errors.As(err, &pe)
}
