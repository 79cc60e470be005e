package mulmat

// fmaLane is x·y + z rounded once: on arm64 Go compiles a float32
// x*y + z into one FMADDS (the spec allows the fusion; the arm64 backend
// does it), the operation fmaF32 emulates, so sgemmDot needs no float64
// arithmetic here. TestFMALane checks the bits against math/big.
func fmaLane(x, y, z float32) float32 { return x*y + z }
