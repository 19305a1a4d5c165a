;;; fly-mode.el --- Major mode for Fly, a textual GPU kernel language  -*- lexical-binding: t; -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "27.1"))
;; Keywords: languages

;; This file is not part of GNU Emacs.

;;; Commentary:

;; A major mode for `.fly' files, the source of the Fly compiler `flyc'
;; (docs/language.md in the Fly repository describes the language).
;;
;; It provides:
;; - a syntax table: `//' line comments, nesting `/* */' block comments,
;;   strings with backslash escapes that end on the line they start, `_' as
;;   part of names, and the three kinds of brackets;
;; - highlighting of keywords, types, builtins, literals, the names that
;;   `kernel', `fn' and `launch' declare, the names a `let', `const',
;;   `for', `carry' or parameter list binds, and the `:' of layout literals
;;   such as (8, 16):(1, 8), with `?' and `_' shown as constants;
;; - indentation by `fly-indent-offset' columns per open brace, with
;;   continuation lines of a bracket aligned after the bracket;
;; - comment settings for M-; and `comment-region', Imenu entries and
;;   defun motion.
;;
;; The word lists below follow `flyc vocabulary', which prints every word
;; the compiler knows; the tests of this mode fail when a word is missing.

;;; Code:

(defgroup fly nil
  "Major mode for Fly, a textual GPU kernel language."
  :group 'languages
  :prefix "fly-")

(defcustom fly-indent-offset 4
  "Number of columns of indentation for each level of braces in Fly code."
  :type 'integer
  :safe #'integerp)

(defface fly-layout-colon-face
  '((t :inherit font-lock-keyword-face))
  "Face for the `:' between the shape and the stride of a layout."
  :group 'fly)

;;;; Vocabulary (the kinds of `flyc vocabulary')

(defconst fly-keywords
  '("kernel" "fn" "launch" "const" "let" "if" "else" "for" "while" "in"
    "carry" "yield" "break" "continue" "return" "import" "static_assert" "require" "as")
  "The keywords of Fly.")

(defconst fly-constants '("true" "false")
  "The constants of Fly.")

(defconst fly-types
  '("i1" "i8" "i16" "i32" "i64" "index" "f16" "bf16" "f32" "f64"
    "f8e4m3" "f8e5m2" "f8e4m3fnuz" "f8e5m2fnuz"
    ;; Compile-time types: ordinary names to the parser.
    "int" "float" "bool" "str" "tuple" "type" "layout")
  "The type names of Fly: the reserved scalar types and the compile-time ones.")

(defconst fly-type-constructors '("vec" "tensor" "smem" "rmem")
  "The type constructors of Fly, always followed by `<' arguments `>'.")

;; BEGIN flyc vocabulary (editors/update-words.py writes these forms)
(defconst fly-builtin-values
  '("target" "warp_size" "thread_idx" "block_idx" "block_dim" "grid_dim" "cluster_idx"
    "cluster_dim" "lane" "nv" "amd")
  "The builtin names of Fly that are values rather than functions.")

(defconst fly-builtin-functions
  '("size" "cosize" "rank" "depth" "shape" "stride" "get" "select" "group" "append" "prepend"
    "zip" "flatten" "crd2idx" "idx2crd" "slice" "dice" "coalesce" "filter" "composition"
    "complement" "right_inverse" "left_inverse" "logical_divide" "zipped_divide"
    "tiled_divide" "flat_divide" "logical_product" "zipped_product" "tiled_product"
    "flat_product" "blocked_product" "raked_product" "recast" "swizzle" "make_layout"
    "make_ordered_layout" "make_row_major" "max_common_vector" "max_common_layout"
    "tv_layout" "take" "basis" "make_basis_like" "make_identity_layout" "coshape"
    "shape_div" "elem_less" "product_each" "make_layout_like" "make_fragment_like"
    "tile_to_shape" "get_hier_coord" "get_flat_coord" "get_1d_coord"
    "make_composed_layout" "composed_inner" "composed_offset" "composed_outer"
    "swizzle_bytes" "range" "range_const" "ceil_div" "min" "max" "clamp" "exp" "exp2" "log"
    "log2" "sqrt" "rsqrt" "abs" "fma" "floor" "ceil" "trunc" "round" "roundeven" "convert"
    "sizeof_bits" "insert" "sum" "bitcast" "where" "barrier" "barrier_arrive"
    "cp_async_commit" "cp_async_wait" "mbarrier_init" "mbarrier_arrive"
    "mbarrier_arrive_expect_tx" "mbarrier_wait" "fence_proxy_async"
    "fence_mbarrier_init" "cluster_sync" "cluster_arrive" "cluster_arrive_relaxed"
    "cluster_wait" "block_rank" "cluster_size" "wgmma_fence" "wgmma_commit"
    "wgmma_wait" "setmaxnreg_inc" "setmaxnreg_dec" "printf" "sched_barrier"
    "sched_group_barrier" "set_prio" "waves_per_eu" "has" "shuffle" "shuffle_xor"
    "shuffle_up" "shuffle_down" "vote_any" "vote_all" "ballot" "atomic_add" "atomic_min"
    "atomic_max" "atomic_umin" "atomic_umax" "atomic_and" "atomic_or" "atomic_xor"
    "atomic_exch" "atomic_cas" "fence" "load" "store" "zeros_like" "universal" "copy_atom"
    "tensor_map" "tma_bytes" "tma_load" "tma_store" "tma_store_commit"
    "tma_store_wait" "mma_atom" "mma_atom_for" "tiled_copy" "tiled_copy_A"
    "tiled_copy_B" "tiled_copy_C" "smem_copy_A" "smem_copy_B" "smem_copy_C"
    "tiled_mma" "partition_S" "partition_D" "partition_A" "partition_B" "partition_C"
    "partition_fragment_A" "partition_fragment_B" "partition_fragment_C" "retile"
    "make_identity_tensor" "copy" "gemm")
  "The builtin functions of Fly, highlighted where they are called.")
;; END flyc vocabulary

(defconst fly-launch-fields '("grid" "block" "shared")
  "The fields a `launch' block sets.")

;;;; Syntax

(defvar fly-mode-syntax-table
  (let ((table (make-syntax-table)))
    ;; `//' comments are style b and end at a newline; `/* */' comments are
    ;; style a and nest, as the lexer's do.
    (modify-syntax-entry ?/ ". 124b" table)
    (modify-syntax-entry ?* ". 23n" table)
    (modify-syntax-entry ?\n "> b" table)
    (modify-syntax-entry ?\" "\"" table)
    (modify-syntax-entry ?\\ "\\" table)
    (modify-syntax-entry ?_ "_" table)
    (modify-syntax-entry ?\( "()" table)
    (modify-syntax-entry ?\) ")(" table)
    (modify-syntax-entry ?\[ "(]" table)
    (modify-syntax-entry ?\] ")[" table)
    (modify-syntax-entry ?\{ "(}" table)
    (modify-syntax-entry ?\} "){" table)
    ;; Operators, and the characters Fly has no use for (single quotes
    ;; included: there are no character literals).
    (dolist (c (string-to-list "+-%&|^~!=<>?:;,.'@#$`"))
      (modify-syntax-entry c "." table))
    table)
  "Syntax table of `fly-mode'.")

(defconst fly--identifier-regexp
  "\\_<\\(?:[a-zA-Z][a-zA-Z0-9_]*\\|_[a-zA-Z0-9_]+\\)\\_>"
  "An identifier; a lone `_' is a token of its own.")

(defun fly--skip-string-body ()
  "Move past the text of a string whose opening quote is before point.
Return non-nil when a closing quote ends the string on this line; else
stop at the end of the line, where the lexer ends an unterminated string."
  (let (closed)
    (while (progn (skip-chars-forward "^\"\\\\\n")
                  (cond ((eq (char-after) ?\") (forward-char) (setq closed t) nil)
                        ((eq (char-after) ?\\)
                         (forward-char)
                         (when (and (char-after) (not (eq (char-after) ?\n)))
                           (forward-char))
                         t))))
    closed))

(defun fly--syntax-propertize-quote ()
  "End the string opened by the quote just matched at its line's end.
A Fly string cannot span lines; without a closing quote on its line, the
opening quote and the newline become generic string fences."
  (let ((quote (match-beginning 0)))
    (unless (nth 8 (fly--ppss quote))
      (save-excursion
        (goto-char (1+ quote))
        (unless (fly--skip-string-body)
          (put-text-property quote (1+ quote) 'syntax-table (string-to-syntax "|"))
          (when (eq (char-after) ?\n)
            ;; A backslash must not escape the fence.
            (when (eq (char-before) ?\\)
              (put-text-property (1- (point)) (point)
                                 'syntax-table (string-to-syntax ".")))
            (put-text-property (point) (1+ (point))
                               'syntax-table (string-to-syntax "|"))))))))

(defun fly-syntax-propertize (start end)
  "Apply the syntax properties of Fly strings between START and END."
  (goto-char start)
  (funcall (syntax-propertize-rules
            ("\"" (0 (ignore (fly--syntax-propertize-quote)))))
           start end))

;;;; Reading the code around a position

(defun fly--ppss (pos)
  "Return the syntactic state at POS, leaving point alone."
  (save-excursion (syntax-ppss pos)))

(defun fly--in-string-or-comment-p (pos)
  "Return non-nil when POS is inside a string or a comment."
  (nth 8 (fly--ppss pos)))

(defun fly--token-end-before (pos)
  "Return the end of the code before POS, skipping blanks and comments."
  (save-excursion
    (goto-char pos)
    (forward-comment (- (buffer-size)))
    (point)))

(defun fly--word-before (pos)
  "Return the name or keyword that ends the code before POS, or nil."
  (save-excursion
    (goto-char (fly--token-end-before pos))
    (let ((end (point)))
      (skip-syntax-backward "w_")
      (and (< (point) end)
           (buffer-substring-no-properties (point) end)))))

(defun fly--char-before-token (pos)
  "Return the last character of the code before POS, or nil."
  (char-before (fly--token-end-before pos)))

(defun fly--opener-after-name-p (open keywords)
  "Return non-nil when the bracket at OPEN follows KEYWORDS and a name.
This is how a parameter list (`fn NAME(') and a launch block (`launch
NAME {') start."
  (save-excursion
    (goto-char (fly--token-end-before open))
    (let ((end (point)))
      (skip-syntax-backward "w_")
      (and (< (point) end)
           (member (fly--word-before (point)) keywords)))))

(defun fly--param-list-p (open)
  "Return non-nil when the bracket at OPEN opens a parameter list."
  (and (eq (char-after open) ?\()
       (fly--opener-after-name-p open '("fn" "kernel"))))

(defun fly--type-arguments-open-p (open pos)
  "Return non-nil when the bracket at OPEN has open type arguments at POS.
They are the `<...>' of a type constructor, read from OPEN up to POS."
  (save-excursion
    (goto-char (1+ open))
    (let ((depth 0))
      (while (progn (forward-comment (buffer-size))
                    (< (point) pos))
        (cond ((looking-at "\\_<\\(?:vec\\|tensor\\|smem\\|rmem\\)\\_>[ \t\n]*<")
               (goto-char (match-end 0))
               (setq depth (1+ depth)))
              ((eq (char-after) ?>)
               (forward-char)
               (when (> depth 0) (setq depth (1- depth))))
              ((looking-at "\\s(\\|\\s\"")
               (condition-case nil (forward-sexp)
                 (scan-error (goto-char pos))))
              ((> (skip-syntax-forward "w_") 0))
              (t (forward-char))))
      (> depth 0))))

(defun fly--pattern-names-p (pos)
  "Return non-nil when POS is inside the tuple pattern of a `let' or `for'."
  (let ((opens (reverse (nth 9 (fly--ppss pos))))
        (result 'unknown))
    (while (eq result 'unknown)
      (let ((open (car opens)))
        (cond ((not (and open (eq (char-after open) ?\())) (setq result nil))
              ((member (fly--word-before open) '("let" "for")) (setq result t))
              ((memq (fly--char-before-token open) '(?\( ?,)) (setq opens (cdr opens)))
              (t (setq result nil)))))
    result))

(defun fly--binder-p (beg end)
  "Return non-nil when the identifier from BEG to END is being bound.
That is a name after `let', `for' or `const', in the tuple pattern of a
`let' or `for', a parameter of a `fn' or `kernel', or a name a `carry'
gives a value."
  (let ((before (fly--word-before beg)))
    (cond
     ((member before '("let" "for")) t)
     ((equal before "const")
      (save-excursion
        (goto-char (fly--token-end-before beg))
        (skip-syntax-backward "w_")
        (not (equal (fly--word-before (point)) "if"))))
     (before nil)
     ((memq (fly--char-before-token beg) '(?\( ?,))
      (let ((open (nth 1 (fly--ppss beg))))
        (and open
             (eq (char-after open) ?\()
             (or (and (fly--param-list-p open)
                      (not (fly--type-arguments-open-p open beg)))
                 (and (equal (fly--word-before open) "carry")
                      (save-excursion
                        (goto-char end)
                        (looking-at "[ \t\n]*=\\([^=]\\|\\'\\)")))
                 (fly--pattern-names-p beg))))))))

(defun fly--annotation-colon-p (pos)
  "Return non-nil when the `:' at POS is that of a type annotation.
Every other `:' in Fly code separates the shape and stride of a layout."
  (save-excursion
    (goto-char (fly--token-end-before pos))
    (let ((end (point)))
      (cond
       ((eq (char-before) ?\))
        (condition-case nil
            (progn (backward-sexp)
                   (equal (fly--word-before (point)) "let"))
          (scan-error nil)))
       ((= (skip-syntax-backward "w_") 0) nil)
       ((equal (buffer-substring-no-properties (point) end) "_")
        (equal (fly--word-before (point)) "let"))
       (t (fly--binder-p (point) end))))))

;;;; Font lock

(defun fly--search (regexp limit accept &optional group)
  "Search for REGEXP before LIMIT, in code, until ACCEPT agrees.
ACCEPT is called with no argument and the match data set; return non-nil
and leave the match data of the accepted match, or return nil.  Text that
already has a face (comments, strings, keywords) is passed over at once:
font lock would not highlight it again.  GROUP is the group of the match
that is to be highlighted, 0 when nil; when a match is refused, the
search goes on from the start of that group."
  (let ((group (or group 0))
        found)
    (while (and (not found) (re-search-forward regexp limit t))
      (let ((beg (match-beginning group)))
        (setq found (save-match-data
                      (and (not (get-text-property beg 'face))
                           (not (fly--in-string-or-comment-p beg))
                           (funcall accept))))
        ;; What came before the group may start the next match.
        (unless (or found (= group 0))
          (goto-char (max beg (1+ (match-beginning 0)))))))
    found))

(defun fly--unqualified-p ()
  "Return non-nil unless the match is a member, after a `.'."
  (not (eq (char-before (match-beginning 0)) ?.)))

(defconst fly--builtin-value-regexp (regexp-opt fly-builtin-values 'symbols)
  "A builtin value.")

(defconst fly--builtin-function-regexp
  (concat "\\(" (regexp-opt fly-builtin-functions 'symbols) "\\)[ \t]*(")
  "A call of a builtin function, or of one as a method; the name in group 1.")

(defconst fly--launch-field-regexp
  (concat "\\(" (regexp-opt fly-launch-fields 'symbols) "\\)[ \t]*=\\(?:[^=]\\|$\\)")
  "A field of a launch block set to a value; the name in group 1.")

(defconst fly--number-regexp
  (let* ((dec "[0-9]+\\(?:_+[0-9]+\\)*")
         (hex "0x[0-9a-fA-F]+\\(?:_+[0-9a-fA-F]+\\)*")
         (bin "0b[01]+\\(?:_+[01]+\\)*")
         (exp (concat "[eE][-+]?" dec))
         (float (concat dec "\\(?:\\." dec "\\(?:" exp "\\)?\\|" exp "\\)")))
    ;; A numeral followed by more of one (10u, 0.5f) is malformed: not shown.
    (concat "\\_<\\(" hex "\\|" bin "\\|" float "\\|" dec "\\)"
            "\\(?:[^._[:alnum:]]\\|\\.[^0-9]\\|\\'\\)"))
  "An integer or float literal, in group 1.")

(defun fly--match-unterminated-quote (limit)
  "Find the opening quote of a string left open on its line, before LIMIT."
  (let (found)
    (while (and (not found) (search-forward "\"" limit t))
      (setq found (equal (get-text-property (1- (point)) 'syntax-table)
                         (string-to-syntax "|"))))
    found))

(defun fly--match-builtin-value (limit)
  "Find a builtin value before LIMIT, not one after a `.'."
  (fly--search fly--builtin-value-regexp limit #'fly--unqualified-p))

(defun fly--match-atom (limit)
  "Find an atom such as nv.mma_sync_16x8x16 before LIMIT."
  (fly--search "\\_<\\(nv\\|amd\\)\\.\\([a-zA-Z_][a-zA-Z0-9_]*\\)\\_>" limit
               #'fly--unqualified-p))

(defun fly--match-builtin-function (limit)
  "Find a call of a builtin function before LIMIT."
  (fly--search fly--builtin-function-regexp limit (lambda () t)))

(defun fly--match-launch-field (limit)
  "Find a field of a launch block before LIMIT."
  (fly--search fly--launch-field-regexp limit
               (lambda ()
                 (let ((open (nth 1 (fly--ppss (match-beginning 0)))))
                   (and open
                        (eq (char-after open) ?\{)
                        (fly--opener-after-name-p open '("launch"))
                        (memq (fly--char-before-token (match-beginning 0))
                              '(?\{ ?\; ?\})))))))

(defconst fly--binder-regexp
  (concat "\\(?:\\_<\\(?:let\\|for\\|const\\)[ \t\n]+\\|[(,][ \t\n]*\\|^[ \t]*\\)\\("
          fly--identifier-regexp "\\)")
  "A name that may be being bound, in group 1: what precedes it says.
A name at the start of a line may follow a comma and a comment.")

(defun fly--match-binder (limit)
  "Find a name being bound, before LIMIT."
  (fly--search fly--binder-regexp limit
               (lambda () (fly--binder-p (match-beginning 1) (match-end 1)))
               1))

(defun fly--match-layout-colon (limit)
  "Find the `:' of a layout before LIMIT."
  (fly--search ":" limit
               (lambda () (not (fly--annotation-colon-p (match-beginning 0))))))

(defconst fly-font-lock-keywords
  `((fly--match-unterminated-quote 0 'font-lock-warning-face t)
    (,(concat "\\_<\\(kernel\\|fn\\|launch\\)\\_>[ \t]+\\("
              fly--identifier-regexp "\\)")
     (1 'font-lock-keyword-face)
     (2 'font-lock-function-name-face))
    (,(regexp-opt fly-keywords 'symbols) . 'font-lock-keyword-face)
    (,(regexp-opt fly-constants 'symbols) . 'font-lock-constant-face)
    (,(regexp-opt (append fly-types fly-type-constructors) 'symbols)
     . 'font-lock-type-face)
    (fly--match-binder 1 'font-lock-variable-name-face)
    (fly--match-atom (1 'font-lock-builtin-face) (2 'font-lock-constant-face))
    (fly--match-builtin-value . 'font-lock-builtin-face)
    (fly--match-builtin-function 1 'font-lock-builtin-face)
    (fly--match-launch-field 1 'font-lock-builtin-face)
    (,fly--number-regexp 1 'font-lock-constant-face)
    ("\\_<_\\_>\\|\\?" . 'font-lock-constant-face)
    (fly--match-layout-colon . 'fly-layout-colon-face))
  "Highlighting of Fly code beyond comments and strings.")

;;;; Indentation

(defun fly--hanging-p (open)
  "Return non-nil when nothing but a comment follows the bracket at OPEN."
  (save-excursion
    (goto-char (1+ open))
    (skip-chars-forward " \t")
    (or (eolp) (looking-at "//"))))

(defun fly--base-indentation (pos &optional statement)
  "Return the indentation of the line where the code at POS begins.
A line that continues a bracket closed before POS does not count: the
search goes back to the line of that bracket, so a body brace at the end
of a parameter list spread over lines indents from the `kernel' line.
With STATEMENT, a line that continues the expression of the line before
does not count either: a brace indents from the start of its statement."
  (save-excursion
    (goto-char pos)
    (let (done)
      (while (not done)
        (let ((opens (nth 9 (syntax-ppss))))
          (back-to-indentation)
          ;; The brackets open at the start of the line but closed before
          ;; the code: the first of them is where that code started.
          (let ((line-opens (nth 9 (syntax-ppss)))
                (line-start (point)))
            (while (and line-opens (eq (car line-opens) (car opens)))
              (setq line-opens (cdr line-opens)
                    opens (cdr opens)))
            (cond (line-opens (goto-char (car line-opens)))
                  ((and statement (fly--statement-continuation-p))
                   (goto-char (fly--token-end-before line-start))
                   (when (>= (point) (line-beginning-position 2))
                     (setq done t)))
                  (t (setq done t))))))
      (current-indentation))))

(defun fly--closer-indentation (open)
  "Return the indentation of a line beginning with the closer of OPEN."
  (if (or (eq (char-after open) ?\{) (fly--hanging-p open))
      (fly--base-indentation open (eq (char-after open) ?\{))
    (save-excursion (goto-char open) (current-column))))

(defun fly--inner-indentation (open)
  "Return the indentation of a line inside the bracket at OPEN.
Inside braces, and inside other brackets that end their line, it is one
`fly-indent-offset' more than the line of the bracket; otherwise the line
lines up with what follows the bracket."
  (if (or (eq (char-after open) ?\{) (fly--hanging-p open))
      (+ (fly--base-indentation open (eq (char-after open) ?\{)) fly-indent-offset)
    (save-excursion
      (goto-char (1+ open))
      (skip-chars-forward " \t")
      (current-column))))

(defconst fly--continuation-start-regexp
  (concat "\\(?:\\.\\|&&\\|||\\|->\\|[+*%&|^=<>:]\\|/[^/*]"
          "\\|\\_<\\(?:as\\|in\\|carry\\)\\_>\\)")
  "The start of a line that goes on with the expression of the line before.")

(defconst fly--continuation-end-regexp
  "\\(?:[-+*/%&|^=<:.!~]\\|\\_<\\(?:as\\|in\\|carry\\)\\)"
  "The end of a line whose expression goes on on the next line.
A `>' is not one: it more often closes type arguments.")

(defun fly--continuation-p ()
  "Return non-nil when the line at point continues an expression."
  (or (looking-at fly--continuation-start-regexp)
      (save-excursion
        (goto-char (fly--token-end-before (point)))
        (and (> (point) (point-min))
             (looking-back fly--continuation-end-regexp
                           (max (point-min) (- (point) 6)))))))

(defun fly--statement-continuation-p ()
  "Return non-nil when the line at point continues a statement.
Point is at the line's indentation.  Only a line in braces or at the top
level is one: inside other brackets, lines line up with the bracket."
  (let ((open (nth 1 (syntax-ppss))))
    (and (or (not open) (eq (char-after open) ?\{))
         (fly--continuation-p))))

(defun fly--block-comment-indentation (start)
  "Return the indentation of a line inside the block comment at START.
A line that starts with `*' lines up under the `*' of `/*'; other lines
keep their indentation (nil), as they may hold commented-out code."
  (when (looking-at "\\*")
    (save-excursion (goto-char start) (1+ (current-column)))))

(defun fly-calculate-indentation ()
  "Return the indentation of the current line as Fly code, or nil.
It is nil for a line inside a string or a block comment that should keep
its own indentation."
  (save-excursion
    (back-to-indentation)
    (let* ((ppss (syntax-ppss))
           (open (nth 1 ppss)))
      (cond
       ((nth 3 ppss) nil)
       ((nth 4 ppss) (fly--block-comment-indentation (nth 8 ppss)))
       ((and open (looking-at "\\s)")) (fly--closer-indentation open))
       (t (+ (if open (fly--inner-indentation open) 0)
             (if (fly--statement-continuation-p) fly-indent-offset 0)))))))

(defun fly-indent-line ()
  "Indent the current line as Fly code."
  (interactive)
  (let ((indent (fly-calculate-indentation)))
    (if (not indent)
        'noindent
      (let ((offset (- (current-column) (current-indentation))))
        (indent-line-to indent)
        (when (> offset 0)
          (forward-char offset))))))

;;;; Navigation

(defconst fly--item-regexp
  "^\\(?:kernel\\|fn\\|launch\\|const\\|static_assert\\|import\\)\\_>"
  "The start of a top-level item.")

(defun fly-beginning-of-defun (&optional arg)
  "Move back to the start of the ARGth top-level item before point.
With a negative ARG, move forward to the start of the next item."
  (let ((arg (or arg 1))
        (found t))
    (while (and found (> arg 0))
      (setq found (fly--search-item #'re-search-backward))
      (setq arg (1- arg)))
    (while (and found (< arg 0))
      (let ((start (point)))
        (when (looking-at fly--item-regexp) (forward-char))
        (setq found (fly--search-item #'re-search-forward))
        (if found (goto-char (match-beginning 0)) (goto-char start)))
      (setq arg (1+ arg)))
    found))

(defun fly--search-item (search)
  "Find the start of an item, outside comments and strings, with SEARCH."
  (let (found)
    (while (and (not found) (funcall search fly--item-regexp nil t))
      (setq found (not (nth 8 (fly--ppss (match-beginning 0))))))
    found))

(defun fly-end-of-defun ()
  "Move from the start of a top-level item to its end.
A kernel, function, launch block or const block ends with the braces of
its body; other items end with their `;'."
  (let ((braced (looking-at "\\(?:kernel\\|fn\\|launch\\)\\_>\\|const[ \t\n]*{"))
        (done nil))
    (condition-case nil
        (while (not done)
          (forward-comment (buffer-size))
          (cond ((eobp) (setq done t))
                ((and (not braced) (eq (char-after) ?\;)) (forward-char) (setq done t))
                ((and braced (eq (char-after) ?\{)) (forward-sexp) (setq done t))
                ((looking-at "\\s(\\|\\s\"") (forward-sexp))
                ((> (skip-syntax-forward "w_") 0))
                (t (forward-char))))
      (scan-error (goto-char (point-max))))))

;;;; The mode

(defconst fly-imenu-generic-expression
  `(("Kernels" ,(concat "^kernel[ \t]+\\(" fly--identifier-regexp "\\)") 1)
    ("Functions" ,(concat "^fn[ \t]+\\(" fly--identifier-regexp "\\)") 1)
    ("Launches" ,(concat "^launch[ \t]+\\(" fly--identifier-regexp "\\)") 1)
    ("Constants" ,(concat "^const[ \t]+\\(" fly--identifier-regexp "\\)") 1))
  "Imenu entries of Fly: the kernels, functions, launches and constants.")

;;;###autoload
(define-derived-mode fly-mode prog-mode "Fly"
  "Major mode for editing Fly, a textual GPU kernel language.

\\{fly-mode-map}"
  :syntax-table fly-mode-syntax-table
  (setq-local font-lock-defaults '(fly-font-lock-keywords nil nil))
  (setq-local syntax-propertize-function #'fly-syntax-propertize)
  (setq-local comment-start "// ")
  (setq-local comment-end "")
  (setq-local comment-start-skip "\\(?://+\\|/\\*+\\)[ \t]*")
  (setq-local comment-end-skip "[ \t]*\\*+/")
  (setq-local indent-line-function #'fly-indent-line)
  (setq-local indent-tabs-mode nil)
  (setq-local electric-indent-chars (append "})]" electric-indent-chars))
  (setq-local beginning-of-defun-function #'fly-beginning-of-defun)
  (setq-local end-of-defun-function #'fly-end-of-defun)
  (setq-local imenu-generic-expression fly-imenu-generic-expression))

;;;###autoload
(add-to-list 'auto-mode-alist '("\\.fly\\'" . fly-mode))

(provide 'fly-mode)

;;; fly-mode.el ends here
