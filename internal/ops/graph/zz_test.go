package graph
import ("testing";"fmt";"os";"strings")
func TestZZ(t *testing.T){
 for _, s := range strings.Split(os.Getenv("CS"), ";") {
 c, err := ParseCaseString(s); if err != nil { fmt.Println("ERR", err); continue }
 fmt.Printf("{%q,\n\t%q},\n", s, summary(c))
 }
}
