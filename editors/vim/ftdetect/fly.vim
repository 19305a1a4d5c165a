" Fly source files. Vim knows no other *.fly type, so setfiletype is enough
" and leaves a modeline or an earlier, more specific rule the last word.
autocmd BufNewFile,BufRead *.fly setfiletype fly
