// Package scenarios is the language of kasmrt's input files: it loads,
// validates and describes scenario and operator files, reporting every
// problem with its file, line, column and key path.
package scenarios
