// Package cdp drives Chromium over the Chrome DevTools Protocol: it launches
// or attaches to a browser, and reads, clicks, fills and waits on the page of
// its one attached tab.
//
// Elements are found two ways. The model-facing way lists the interactive
// elements of the accessibility tree under short handles ("e12") and clicks
// one by handle or by visible text, so the model never writes a selector or
// script. The scenario-facing way takes CSS selectors that a scenario author
// declared. Values typed with Fill are never logged, and the values of
// password inputs are never read back.
package cdp
