# Script mode helper of parpat_embed_opencl: writes IN as a raw string literal into OUT.
file(READ "${IN}" content)
file(WRITE "${OUT}"
     "// Generated from ${IN}; edit the .cl file instead.\n"
     "extern const char* const parpat_cl_${IDENT};\n"
     "const char* const parpat_cl_${IDENT} = R\"PARPAT_CL(${content})PARPAT_CL\";\n")
