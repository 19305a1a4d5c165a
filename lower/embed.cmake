# Writes the dialect's IRDL text (IN) as a C string (OUT), so that flyc
# carries its dialect and needs no file at run time.
file(READ ${IN} text HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${text}")
file(WRITE ${OUT} "/* Generated from fly.irdl.mlir by embed.cmake; do not edit. */\n"
                  "const char fly_dialect_irdl[] = {${bytes} 0};\n")
