// Command et is the command-line toolkit of an ET-SoC-1 kernel developer.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
