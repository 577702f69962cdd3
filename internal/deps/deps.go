package deps
import (
 _ "github.com/leanovate/gopter"
 _ "github.com/x448/float16"
 _ "gonum.org/v1/plot"
 _ "github.com/chromedp/chromedp"
 _ "github.com/schollz/progressbar/v3"
 _ "github.com/google/go-cmp/cmp"
 _ "github.com/mattn/go-isatty"
)
