;;; fly-mode-test.el --- ERT tests of fly-mode  -*- lexical-binding: t; -*-

;;; Commentary:

;; The tests of editors/emacs/fly-mode.el, for `emacs --batch -Q'. From the
;; top of the repository, all of them:
;;
;;   emacs --batch -Q -l tests/editors/emacs/fly-mode-test.el \
;;         -f ert-run-tests-batch-and-exit
;;
;; ctest runs them in groups (tests/editors/emacs/CMakeLists.txt) through
;; `fly-mode-test-run', which fails when its selector matches no test.
;;
;; The environment:
;;   FLYC     the flyc executable whose `flyc vocabulary' the vocabulary
;;            tests read (default: build/bin/flyc of the repository)
;;   TMPDIR   where temporary files go (ctest points it into the build tree)
;;
;; Highlighting is checked against faceup golden files: faceup/PATH.faceup
;; holds how fly-mode fontifies PATH (a path in the repository; sample.fly
;; is the file next to this one), in the markup of Emacs's faceup.el, where
;; «k:let» is `let' in font-lock-keyword-face and «L::» the `:' of a layout
;; in fly-layout-colon-face. After a deliberate change to the mode or to a
;; checked file, regenerate them and review the difference:
;;
;;   emacs --batch -Q -l tests/editors/emacs/fly-mode-test.el \
;;         -f fly-mode-test-update-faceup

;;; Code:

(require 'cl-lib)
(require 'ert)
(require 'imenu)
(require 'json)
(require 'subr-x)

;; faceup.el comes with Emacs 28; before that, with Debian's elpa-faceup,
;; which `emacs -Q' does not put on the load path.
(eval-and-compile
  (unless (require 'faceup nil t)
    (dolist (dir (file-expand-wildcards "/usr/share/emacs/site-lisp/elpa/faceup-*"))
      (add-to-list 'load-path dir))
    (require 'faceup)))

(eval-and-compile
  (defconst fly-mode-test-dir
    (file-name-directory (or load-file-name (bound-and-true-p byte-compile-current-file)
                             buffer-file-name))
    "This directory: tests/editors/emacs/.")

  (defconst fly-mode-test-root
    (expand-file-name "../../../" fly-mode-test-dir)
    "The top of the repository.")

  (defconst fly-mode-test-source
    (expand-file-name "editors/emacs/fly-mode.el" fly-mode-test-root)
    "The file under test.")

  ;; The source itself, never a .elc that may lie beside it.
  (load fly-mode-test-source nil t t))

(defconst fly-mode-test-faceup-dir (expand-file-name "faceup/" fly-mode-test-dir)
  "Where the golden files are.")

(defconst fly-mode-test-emacs (expand-file-name invocation-name invocation-directory)
  "This Emacs, to run child processes with.")

;;;; Running

(defun fly-mode-test-run (selector)
  "Run the tests whose names match the regexp SELECTOR, then exit.
Exit with a failure when SELECTOR matches no test, so that a misspelt
ctest command cannot pass by running nothing."
  (unless (ert-select-tests selector t)
    (message "fly-mode-test-run: no test matches %S" selector)
    (kill-emacs 1))
  (ert-run-tests-batch-and-exit selector))

;;;; Files

(defun fly-mode-test--relative (file)
  "Return the name of FILE relative to the top of the repository."
  (file-relative-name file fly-mode-test-root))

(defun fly-mode-test--fly-files (dir &optional recursive)
  "Return the .fly files in DIR of the repository, sorted.
With RECURSIVE, those of its subdirectories too."
  (let ((dir (expand-file-name dir fly-mode-test-root)))
    (when (file-directory-p dir)
      (sort (if recursive
                (directory-files-recursively dir "\\.fly\\'")
              (directory-files dir t "\\.fly\\'"))
            #'string<))))

(defun fly-mode-test-faceup-files ()
  "Return the .fly files that have faceup golden files: every one must."
  (append (list (expand-file-name "sample.fly" fly-mode-test-dir))
          (fly-mode-test--fly-files "examples")
          (fly-mode-test--fly-files "kernels" t)))

(defun fly-mode-test-indent-files ()
  "Return the .fly files that re-indenting must reproduce."
  (append (list (expand-file-name "sample.fly" fly-mode-test-dir))
          (fly-mode-test--fly-files "examples")
          (fly-mode-test--fly-files "stdlib" t)
          (fly-mode-test--fly-files "kernels" t)))

(defun fly-mode-test-golden-file (file)
  "Return the faceup golden file of the .fly FILE."
  (let ((name (if (file-equal-p (file-name-directory file) fly-mode-test-dir)
                  (file-name-nondirectory file)
                (fly-mode-test--relative file))))
    (expand-file-name (concat name ".faceup") fly-mode-test-faceup-dir)))

(defun fly-mode-test--test-name (prefix file)
  "Return the name of the test PREFIX of FILE: PREFIX/PATH without .fly."
  (intern (concat prefix "/" (file-name-sans-extension (fly-mode-test--relative file)))))

(defun fly-mode-test-fail (summary &optional details)
  "Fail the test with SUMMARY, printing DETAILS first as they are."
  (when details (message "%s" details))
  (ert-fail summary))

(defun fly-mode-test--read (file)
  "Return the text of FILE, read as UTF-8."
  (with-temp-buffer
    (let ((coding-system-for-read 'utf-8-unix))
      (insert-file-contents file))
    (buffer-string)))

;;;; Font lock

(defconst fly-mode-test-face-names
  '((fly-layout-colon-face . "L"))
  "Short names in the golden files for the faces of fly-mode.")

(defun fly-mode-test-markup (text)
  "Return TEXT as fly-mode fontifies it, in faceup markup."
  (with-temp-buffer
    (insert text)
    (fly-mode)
    (font-lock-ensure)
    (let ((faceup-face-short-alist (append fly-mode-test-face-names
                                           faceup-face-short-alist)))
      (faceup-markup-buffer))))

(defun fly-mode-test--first-difference (want got)
  "Describe the first line where the texts WANT and GOT differ."
  (let ((want-lines (split-string want "\n"))
        (got-lines (split-string got "\n"))
        (line 1))
    (while (and want-lines (equal (car want-lines) (car got-lines)))
      (setq want-lines (cdr want-lines)
            got-lines (cdr got-lines)
            line (1+ line)))
    (format "line %d:\n  want: %s\n  got:  %s" line
            (or (car want-lines) "<end>") (or (car got-lines) "<end>"))))

(defun fly-mode-test-check-faceup (file)
  "Fail unless FILE fontifies as its golden file says."
  (let ((golden (fly-mode-test-golden-file file)))
    (unless (file-exists-p golden)
      (ert-fail (format "%s has no golden file %s: run fly-mode-test-update-faceup"
                        (fly-mode-test--relative file) (fly-mode-test--relative golden))))
    (let ((want (fly-mode-test--read golden))
          (got (fly-mode-test-markup (fly-mode-test--read file))))
      (unless (equal want got)
        (fly-mode-test-fail
         (format "%s is not fontified as %s says" (fly-mode-test--relative file)
                 (fly-mode-test--relative golden))
         (fly-mode-test--first-difference want got))))))

(defun fly-mode-test-update-faceup ()
  "Write the golden file of every checked .fly file, and delete stale ones."
  (let ((goldens nil))
    (dolist (file (fly-mode-test-faceup-files))
      (let ((golden (fly-mode-test-golden-file file))
            (coding-system-for-write 'utf-8-unix))
        (make-directory (file-name-directory golden) t)
        (write-region (fly-mode-test-markup (fly-mode-test--read file)) nil golden nil 'silent)
        (push golden goldens)
        (message "wrote %s" (fly-mode-test--relative golden))))
    (dolist (golden (directory-files-recursively fly-mode-test-faceup-dir "\\.faceup\\'"))
      (unless (member golden goldens)
        (delete-file golden)
        (message "deleted %s, whose .fly file is gone" (fly-mode-test--relative golden))))))

;; One test per file, so that a failure names it.
(dolist (file (fly-mode-test-faceup-files))
  (let ((file file))
    (ert-set-test
     (fly-mode-test--test-name "fly-mode-test-faceup" file)
     (make-ert-test
      :name (fly-mode-test--test-name "fly-mode-test-faceup" file)
      :documentation (format "%s is fontified as its golden file says."
                             (fly-mode-test--relative file))
      :body (lambda () (fly-mode-test-check-faceup file))))))

(ert-deftest fly-mode-test-faceup-golden-files ()
  "Every golden file belongs to a checked .fly file."
  (let* ((wanted (mapcar #'fly-mode-test-golden-file (fly-mode-test-faceup-files)))
         (stale (cl-remove-if (lambda (golden) (member golden wanted))
                              (directory-files-recursively fly-mode-test-faceup-dir
                                                           "\\.faceup\\'"))))
    (should (equal (mapcar #'fly-mode-test--relative stale) nil))))

(ert-deftest fly-mode-test-faceup-strings ()
  "Strings, escapes and comments that the sample file cannot hold."
  (dolist (case
           '(;; A string ends on its line, as in the lexer: the rest of a
             ;; line after an unterminated string is not string.
             "«k:let» «v:s» = «w:\"»«s:no closing quote\n»«k:let» «v:t» = «c:1»;\n"
             "«k:let» «v:s» = «w:\"»«s:a backslash does not join lines \\\n»«c:1»;\n"
             "«k:let» «v:s» = «s:\"\\\\\"»;  «m:// »«x:an escaped backslash\n»"
             ;; Comments nest; a quote in a comment opens no string.
             "«m:/* »«x:a /* b */ \" c»«m: */» «k:let» «v:x» = «c:1»;\n"
             "«m:// »«x:\"\n»«k:let» «v:x» = «c:1»;\n"
             ;; Malformed numbers are not shown as numbers.
             "«k:let» «v:a» = 10u + 0.5f + 1_ + «c:1.5e3» + «c:0x1F» + «c:0b10»;\n"))
    (should (equal (fly-mode-test-markup (faceup-clean-string case)) case))))

(ert-deftest fly-mode-test-faceup-binders ()
  "Names being bound are variable names; `:' is a layout's or an annotation's."
  (dolist (case
           '("«k:fn» «f:f»(«v:t»: «t:tensor»<«t:f16», N, align = «c:16»>, «v:u» = «c:8»«L::»«c:1») {}\n"
             "«k:kernel» «f:k»(«v:a»,  «m:// »«x:a comment\n»         «v:b»: «t:i32») {}\n"
             "«k:let» «v:x»: «t:vec»<«c:4», «t:f32»> = y;\n"
             "«k:let» («v:a», («v:b», «c:_»)): «t:layout» = (c, (d, e));\n"
             "«k:let» «c:_»: «t:i32» = «c:1»;\n"
             "«k:if» «k:const» N > «c:0» { «b:range»(n) } «k:else» { f(x, width = «c:32») }\n"
             "«k:for» («v:i», «v:j») «k:in» t «k:carry» («v:acc» = «c:0», «v:n» = m == «c:1») {}\n"
             "«k:let» «v:size» = «c:4»;  «k:let» «v:y» = «b:size»(t) + size + x.lane + «b:lane»;\n"
             "«k:launch» «f:k» { «k:let» «v:blocks» = «c:4»; «b:grid» = blocks; «b:block» = «c:128»; }\n"))
    (should (equal (fly-mode-test-markup (faceup-clean-string case)) case))))

(ert-deftest fly-mode-test-faceup-line-by-line ()
  "Fontifying line by line, as jit-lock may, gives what a whole file gets."
  (dolist (file (fly-mode-test-faceup-files))
    (let ((text (fly-mode-test--read file)))
      (with-temp-buffer
        (insert text)
        (fly-mode)
        (dolist (line (number-sequence (count-lines (point-min) (point-max)) 1 -1))
          (goto-char (point-min))
          (forward-line (1- line))
          (font-lock-fontify-region (point) (line-beginning-position 2)))
        (let ((faceup-face-short-alist (append fly-mode-test-face-names
                                               faceup-face-short-alist)))
          (should (equal (faceup-markup-buffer) (fly-mode-test-markup text))))))))

;;;; The vocabulary of flyc

(defconst fly-mode-test-kind-faces
  '(("keyword" . font-lock-keyword-face)
    ("constant" . font-lock-constant-face)
    ("type" . font-lock-type-face)
    ("type-constructor" . font-lock-type-face)
    ("builtin-value" . font-lock-builtin-face)
    ("builtin-function" . font-lock-builtin-face))
  "The face fly-mode gives each kind of word `flyc vocabulary' lists.")

(defconst fly-mode-test-kind-lists
  '(("keyword" . fly-keywords)
    ("constant" . fly-constants)
    ("type" . fly-types)
    ("type-constructor" . fly-type-constructors)
    ("builtin-value" . fly-builtin-values)
    ("builtin-function" . fly-builtin-functions))
  "The word list of fly-mode for each kind of `flyc vocabulary'.")

(defconst fly-mode-test-keyword-contexts
  '(("kernel" . "kernel scale(X: tensor<f32>, const BLOCK: int = 128) {\n}\n")
    ("fn" . "fn axpy(a, x, y) -> f32 {\n    fma(a, x, y)\n}\n")
    ("launch" . "launch scale {\n    grid = ceil_div(size(X), BLOCK);\n}\n")
    ("const" . "const N = 4;\nconst {\n    let M = N;\n}\nkernel k(const B: int = 1) {\n    if const B > 1 {}\n}\n")
    ("let" . "fn f(t) {\n    let (a, _) = (t, 2);\n    let b: f32 = 1.0;\n}\n")
    ("if" . "fn sign(x) {\n    if x < 0 { -1 } else if x > 0 { 1 } else { 0 }\n}\n")
    ("else" . "fn sign(x) {\n    if x < 0 { -1 } else if x > 0 { 1 } else { 0 }\n}\n")
    ("for" . "fn dot(A, n) {\n    for k in range(0, n) carry (acc = 0.0) {\n        yield acc + A[k].load();\n    }\n    acc\n}\n")
    ("in" . "fn dot(A, n) {\n    for k in range(0, n) carry (acc = 0.0) {\n        yield acc + A[k].load();\n    }\n    acc\n}\n")
    ("carry" . "fn dot(A, n) {\n    for k in range(0, n) carry (acc = 0.0) {\n        yield acc + A[k].load();\n    }\n    acc\n}\n")
    ("yield" . "fn dot(A, n) {\n    for k in range(0, n) carry (acc = 0.0) {\n        yield acc + A[k].load();\n    }\n    acc\n}\n")
    ("return" . "fn first(a, b) {\n    if a > 0 {\n        return a;\n    }\n    return b;\n}\n")
    ("import" . "import std.math;\nimport \"lib/tiles.fly\";\n")
    ("static_assert" . "static_assert(BLOCK % 32 == 0, \"BLOCK\");\n")
    ("as" . "fn f(x) {\n    (x as f16, 1.0 as bf16)\n}\n"))
  "A realistic snippet for each keyword; a new one gets `fly-mode-test-contexts'.")

(defconst fly-mode-test-contexts
  '(("keyword" . "fn f(x) {\n    @ x;\n}\n")
    ("constant" . "const DEBUG = @;\nconst CHECKED = !DEBUG && @;\n")
    ("type" . "fn f(x: @, const P: @ = 1) -> @ {\n    let y: @ = x as @;\n    y\n}\n")
    ("type-constructor" . "fn f(A: @<f32, (?, ?):(?, 1)>) {\n    let r = @<f32>(4);\n}\n")
    ("builtin-value" . "kernel k(X: tensor<f32>) {\n    let v = @;\n    let w = @.x + 1;\n}\n")
    ("builtin-function" . "fn f(t, x) {\n    let a = @(t, x);\n    t.@(x)\n}\n"))
  "A realistic snippet for each kind of word, with @ where the word goes.")

(defun fly-mode-test-flyc ()
  "Return the flyc executable: $FLYC, else the one in build/bin."
  (let ((flyc (or (and (getenv "FLYC") (expand-file-name (getenv "FLYC")))
                  (expand-file-name "build/bin/flyc" fly-mode-test-root))))
    (unless (file-executable-p flyc)
      (if (getenv "FLYC")
          (ert-fail (format "FLYC=%s is not an executable" flyc))
        (ert-skip (format "no %s: build flyc, or set FLYC" flyc))))
    flyc))

(defun fly-mode-test-vocabulary ()
  "Return `flyc vocabulary --json' as an alist from kind to words."
  (with-temp-buffer
    (let ((status (call-process (fly-mode-test-flyc) nil t nil "vocabulary" "--json")))
      (unless (eq status 0)
        (ert-fail (format "flyc vocabulary --json failed (%s): %s" status (buffer-string)))))
    (goto-char (point-min))
    (let ((json-object-type 'alist)
          (json-array-type 'list)
          (json-key-type 'string))
      (json-read))))

(defun fly-mode-test-word-faces (word text)
  "Return the faces of WORD wherever it is code in TEXT, fontified by fly-mode."
  (with-temp-buffer
    (insert text)
    (fly-mode)
    (font-lock-ensure)
    (goto-char (point-min))
    (let ((faces nil))
      (while (re-search-forward (concat "\\_<" (regexp-quote word) "\\_>") nil t)
        (unless (nth 8 (save-excursion (syntax-ppss (match-beginning 0))))
          (push (get-text-property (match-beginning 0) 'face) faces)))
      (nreverse faces))))

(defun fly-mode-test-word-problem (kind word)
  "Return why WORD of KIND is not highlighted as it should be, or nil."
  (let* ((face (cdr (assoc kind fly-mode-test-kind-faces)))
         (text (or (and (equal kind "keyword")
                        (cdr (assoc word fly-mode-test-keyword-contexts)))
                   (replace-regexp-in-string
                    "@" word (cdr (assoc kind fly-mode-test-contexts)) t t)))
         (faces (fly-mode-test-word-faces word text))
         (wrong (cl-remove-if (lambda (f) (memq face (if (listp f) f (list f)))) faces)))
    (cond ((not faces) (format "%s %s: not found in its test snippet" kind word))
          (wrong (format "%s %s: %s expected, got %S in\n%s" kind word face
                         (car wrong)
                         (replace-regexp-in-string "^" "    " (string-trim-right text)))))))

(ert-deftest fly-mode-test-vocabulary-highlighted ()
  "Every word `flyc vocabulary' lists is highlighted with the face of its kind."
  (let ((problems nil))
    (dolist (entry (fly-mode-test-vocabulary))
      (let ((kind (car entry)))
        (if (not (assoc kind fly-mode-test-kind-faces))
            (push (format "kind %s of flyc vocabulary has no face in fly-mode-test-kind-faces"
                          kind)
                  problems)
          (dolist (word (cdr entry))
            (let ((problem (fly-mode-test-word-problem kind word)))
              (when problem (push problem problems)))))))
    (when problems
      (fly-mode-test-fail
       (format "fly-mode misses %d word(s) of flyc vocabulary: %s" (length problems)
               (mapconcat (lambda (p) (car (split-string p ":"))) (reverse problems) ", "))
       (mapconcat #'identity (reverse problems) "\n")))))

(ert-deftest fly-mode-test-vocabulary-known ()
  "Every word fly-mode lists is one `flyc vocabulary' lists, of the same kind."
  (let ((vocabulary (fly-mode-test-vocabulary))
        (problems nil))
    (pcase-dolist (`(,kind . ,list) fly-mode-test-kind-lists)
      (dolist (word (symbol-value list))
        (unless (member word (cdr (assoc kind vocabulary)))
          (push (format "%s lists %s, which flyc vocabulary does not list as a %s"
                        list word kind)
                problems))))
    (should (equal (nreverse problems) nil))))

;;;; Indentation

(defun fly-mode-test-reindent (text &optional offset)
  "Return TEXT with the indentation of its code removed and redone by fly-mode.
Lines that start inside a block comment keep their indentation: fly-mode
leaves them alone. OFFSET, when given, is `fly-indent-offset'."
  (with-temp-buffer
    (insert text)
    (fly-mode)
    (when offset (setq-local fly-indent-offset offset))
    (goto-char (point-min))
    (while (not (eobp))
      (unless (nth 4 (syntax-ppss))
        (delete-horizontal-space))
      (forward-line 1))
    (let ((inhibit-message t))
      (indent-region (point-min) (point-max)))
    (buffer-string)))

(defun fly-mode-test-check-indent (file)
  "Fail unless re-indenting FILE reproduces it."
  (let* ((want (fly-mode-test--read file))
         (got (fly-mode-test-reindent want)))
    (unless (equal want got)
      (fly-mode-test-fail (format "re-indenting %s changes it" (fly-mode-test--relative file))
                          (fly-mode-test--first-difference want got)))))

(dolist (file (fly-mode-test-indent-files))
  (let ((file file))
    (ert-set-test
     (fly-mode-test--test-name "fly-mode-test-indent" file)
     (make-ert-test
      :name (fly-mode-test--test-name "fly-mode-test-indent" file)
      :documentation (format "Re-indenting %s reproduces it." (fly-mode-test--relative file))
      :body (lambda () (fly-mode-test-check-indent file))))))

(defconst fly-mode-test-indent-cases
  '(;; Braces: one level each; closers line up with the line that opened.
    "fn f(x) {\n    if x > 0 {\n        x\n    } else {\n        -x\n    }\n}\n"
    ;; An `if' used as a value, and an `else if' chain.
    "kernel k() {\n    let a = if const target.vendor == \"nvidia\" {\n        1\n    } else if x {\n        2\n    } else {\n        3\n    };\n}\n"
    ;; A bracket followed by code: the next lines line up after it.
    "kernel k(A: tensor<f32>,\n         const B: int = 1) {\n    static_assert(B > 0,\n                  \"B\");\n}\n"
    ;; A bracket that ends its line: one level in, closer back out.
    "fn f() {\n    let t = tiled_copy(\n        atom,\n        (4, 8):(8, 1)\n    );\n    let v = [\n        1,\n    ];\n}\n"
    ;; An expression continued on the next line, by an operator or `carry'.
    "fn f(a, b) {\n    let x = a +\n        b *\n        a;\n    let y = a\n        .load();\n    for i in range(0, n)\n        carry (s = 0) {\n        yield s + i;\n    }\n    x\n}\n"
    ;; Comments are indented as code; a block comment's `*' lines line up.
    "fn f() {\n    // a comment\n    /* a block\n     * comment\n     */\n    let x = 1; // after\n}\n"
    ;; A launch block.
    "launch k {\n    let (M, _) = shape(A);\n    grid = (M / 4,\n            1);\n    block = 128;\n}\n")
  "Snippets that re-indenting must reproduce.")

(ert-deftest fly-mode-test-indent-rules ()
  "The rules of indentation, snippet by snippet."
  (dolist (text fly-mode-test-indent-cases)
    (should (equal (fly-mode-test-reindent text) text))))

(ert-deftest fly-mode-test-indent-offset ()
  "`fly-indent-offset' sets the columns per level."
  (let ((text "fn f(x) {\n  if x {\n    let t = g(\n      x);\n  }\n}\n"))
    (should (equal (fly-mode-test-reindent text 2) text))))

(ert-deftest fly-mode-test-indent-line ()
  "`indent-line-function' is `fly-indent-line'; it keeps point in the text."
  (with-temp-buffer
    (insert "fn f() {\nlet x = 1;\n}\n")
    (fly-mode)
    (should (eq indent-line-function #'fly-indent-line))
    (goto-char (point-min))
    (forward-line 1)
    (search-forward "x")
    (indent-for-tab-command)
    (should (equal (buffer-substring (line-beginning-position) (line-end-position))
                   "    let x = 1;"))
    (should (equal (buffer-substring (line-beginning-position) (point)) "    let x"))
    ;; A closing brace typed at the start of a line moves out to its place.
    (goto-char (point-max))
    (insert "let y = {\n        ")
    (electric-indent-local-mode 1)
    (let ((last-command-event ?\}))
      (call-interactively #'self-insert-command))
    (should (equal (buffer-substring (line-beginning-position) (line-end-position)) "}"))))

(ert-deftest fly-mode-test-indent-in-block-comment ()
  "Lines inside a block comment keep their indentation, but for `*' lines."
  (with-temp-buffer
    (insert "    /* text\n          kept\n  * star\n */\n")
    (fly-mode)
    (let ((inhibit-message t))
      (indent-region (point-min) (point-max)))
    (should (equal (buffer-string) "/* text\n          kept\n * star\n */\n"))))

;;;; The mode

(ert-deftest fly-mode-test-mode-auto-mode-alist ()
  "A .fly file opens in fly-mode, which derives from prog-mode."
  (should (eq (assoc-default "dir/kernel.fly" auto-mode-alist #'string-match) 'fly-mode))
  (should-not (eq (assoc-default "dir/kernel.flyb" auto-mode-alist #'string-match)
                  'fly-mode))
  (with-temp-buffer
    (setq buffer-file-name (expand-file-name "example.fly" temporary-file-directory))
    (unwind-protect
        (progn
          (set-auto-mode)
          (should (eq major-mode 'fly-mode))
          (should (derived-mode-p 'prog-mode)))
      (setq buffer-file-name nil))))

(ert-deftest fly-mode-test-mode-comments ()
  "Comments are `//' lines; `comment-region' and `uncomment-region' round-trip."
  (with-temp-buffer
    (fly-mode)
    (should (equal comment-start "// "))
    (should (equal comment-end ""))
    (insert "fn f() {\n    let x = 1;\n}\n")
    (font-lock-ensure)
    (comment-region (point-min) (point-max))
    (should (equal (buffer-string) "// fn f() {\n//     let x = 1;\n// }\n"))
    (uncomment-region (point-min) (point-max))
    (should (equal (buffer-string) "fn f() {\n    let x = 1;\n}\n"))
    ;; M-; at the end of a line of code adds a comment after it.
    (goto-char (point-min))
    (end-of-line)
    (comment-dwim nil)
    (should (string-match-p "\\`fn f() { +// \\'"
                            (buffer-substring (line-beginning-position)
                                              (line-end-position))))))

(ert-deftest fly-mode-test-mode-syntax ()
  "The syntax table: comments nest, `_' is part of a name, strings escape."
  (with-temp-buffer
    (fly-mode)
    (insert "/* a /* b */ c */ x // d\nlet tile_M2 = \"q\\\"r\" + _;")
    (let ((at (lambda (text) (goto-char (point-min)) (search-forward text)
                (syntax-ppss (match-beginning 0)))))
      (should (nth 4 (funcall at "c */")))
      (should-not (nth 8 (funcall at "x //")))
      (should (nth 4 (funcall at "d")))
      (should (nth 3 (funcall at "r\"")))
      (should-not (nth 8 (funcall at "+ _"))))
    (goto-char (point-min))
    (search-forward "tile")
    (should (equal (thing-at-point 'symbol t) "tile_M2"))
    (should (equal (string (char-syntax ?_)) "_"))
    (should (equal (string (char-syntax ?\')) "."))
    (dolist (pair '("()" "[]" "{}"))
      (should (equal (matching-paren (aref pair 0)) (aref pair 1))))))

(ert-deftest fly-mode-test-mode-imenu-and-defuns ()
  "Imenu lists the kernels, functions and launches; defun motion finds items."
  (with-temp-buffer
    (insert (fly-mode-test--read (expand-file-name "sample.fly" fly-mode-test-dir)))
    (fly-mode)
    (let ((index (imenu--generic-function imenu-generic-expression)))
      (should (assoc "sample" (cdr (assoc "Kernels" index))))
      (should (assoc "scalars" (cdr (assoc "Functions" index))))
      (should (assoc "sample" (cdr (assoc "Launches" index))))
      (should (assoc "TILE" (cdr (assoc "Constants" index)))))
    (goto-char (point-min))
    (search-forward "let h")
    (beginning-of-defun)
    (should (looking-at "fn scalars("))
    (end-of-defun)
    (should (looking-at "\n// `\\?` marks"))
    (goto-char (point-max))
    (beginning-of-defun)
    (should (looking-at "launch sample"))
    (goto-char (point-min))
    (search-forward "const TILE")
    (beginning-of-line)
    (end-of-defun)
    (should (looking-at "/\\* a layout literal"))))

;;;; Byte compilation and installation

(defun fly-mode-test-child-emacs (directory &rest args)
  "Run this Emacs with ARGS in batch, HOME being DIRECTORY.
Return its exit status and output as a cons."
  (with-temp-buffer
    (let* ((process-environment (cons (concat "HOME=" directory) process-environment))
           (default-directory directory)
           (status (apply #'call-process fly-mode-test-emacs nil t nil
                          "--batch" "-Q" args)))
      (cons status (buffer-string)))))

(defmacro fly-mode-test-with-temp-dir (var &rest body)
  "Run BODY with VAR a new temporary directory, deleted afterwards."
  (declare (indent 1))
  `(let ((,var (file-name-as-directory (make-temp-file "fly-mode-test-" t))))
     (unwind-protect (progn ,@body)
       (delete-directory ,var t))))

(ert-deftest fly-mode-test-byte-compile ()
  "fly-mode.el byte-compiles in a bare Emacs without a warning."
  (fly-mode-test-with-temp-dir dir
    (let ((el (expand-file-name "fly-mode.el" dir)))
      (copy-file fly-mode-test-source el)
      (let ((result (fly-mode-test-child-emacs
                     dir "--eval" "(setq byte-compile-error-on-warn t)"
                     "-f" "batch-byte-compile" el)))
        (should (equal result (cons 0 "")))
        (should (file-exists-p (concat el "c")))))))

(ert-deftest fly-mode-test-checkdoc ()
  "The documentation strings of fly-mode.el follow the Emacs conventions."
  (fly-mode-test-with-temp-dir dir
    (let* ((el (expand-file-name "fly-mode.el" dir))
           (result (progn
                     (copy-file fly-mode-test-source el)
                     (fly-mode-test-child-emacs
                      dir "--eval" "(setq checkdoc-arguments-in-order-flag t)"
                      "--eval" (format "(checkdoc-file %S)" el)))))
      (should (equal result (cons 0 ""))))))

(ert-deftest fly-mode-test-package-install ()
  "`package-install-file' installs fly-mode, whose autoloads open .fly files."
  (fly-mode-test-with-temp-dir dir
    (let* ((packages (expand-file-name "elpa" dir))
           (setup (format "(progn (require 'package) (setq package-user-dir %S) (package-initialize))"
                          packages))
           (install (fly-mode-test-child-emacs
                     dir "--eval" setup
                     "--eval" (format "(package-install-file %S)" fly-mode-test-source)))
           (use (fly-mode-test-child-emacs
                 dir "--eval" setup
                 "--eval" (concat "(with-temp-buffer"
                                  " (setq buffer-file-name \"x.fly\")"
                                  " (set-auto-mode)"
                                  " (setq buffer-file-name nil)"
                                  " (princ (list major-mode (featurep 'fly-mode))))"))))
      (should (equal (car install) 0))
      (should (equal use (cons 0 "(fly-mode t)"))))))

(provide 'fly-mode-test)

;;; fly-mode-test.el ends here
