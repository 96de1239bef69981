from django.contrib.auth import get_user_model
from django.contrib.auth.forms import AuthenticationForm
from django.core.validators import MaxLengthValidator


class LoginForm(AuthenticationForm):
    """Django's login form with the username's length checked before any authentication.

    AuthenticationForm sets the field's max_length after the field was built, so the length was
    never validated: an overlong name reached authenticate() and the lockout records (varchar 255),
    and the database refused it with an error page. A name no account can have is simply a failed
    login here, without a password check.
    """

    def __init__(self, request=None, *args, **kwargs):
        super().__init__(request, *args, **kwargs)
        limit = get_user_model()._meta.get_field(get_user_model().USERNAME_FIELD).max_length
        self.fields["username"].validators.append(MaxLengthValidator(limit))
