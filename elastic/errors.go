package elastic

import "errors"

// ErrConfig: a Config field is out of its bounds; the message names it.
var ErrConfig = errors.New("invalid elastic config")
