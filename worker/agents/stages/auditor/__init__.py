"""The Auditor: the element check, the amount standards and the signals an article is weighed by."""
