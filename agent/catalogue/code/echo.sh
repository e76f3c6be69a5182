# echo: writes its input (the args as JSON) back on stdout, then a newline.
cat
echo
